// The package ships no types: one function, `module.exports = stem`.
declare module 'wink-porter2-stemmer' {
  /** The Porter2 (Snowball English) stem of a word; lowercases it first. */
  function stem(word: string): string;
  export = stem;
}
