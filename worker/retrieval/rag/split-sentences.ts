/**
 * Abbreviations that end with a period inside a sentence ("Dr. Smith", "St. Louis", "U.S. Army"), so a
 * period after them does not end the sentence. Lower-cased, without the period.
 */
const ABBREVIATIONS = new Set(
  'mr mrs ms dr prof st sr jr mt ft no vs etc inc ltd co corp jan feb mar apr jun jul aug sep sept oct nov dec gen col lt sgt capt rev gov sen rep fig approx ca cf e.g i.e u.s u.k a.m p.m'.split(
    ' ',
  ),
);

/**
 * Text → sentences, in order, trimmed. A sentence ends at `.`, `!` or `?` (closing quotes and brackets
 * kept with it) followed by space and an upper-case letter, digit or opening quote; and at every line
 * break, since headings, list items and table rows are units of their own. A period after a known
 * abbreviation or a single initial ("J. R. R. Tolkien") does not end a sentence.
 */
export function splitSentences(text: string): string[] {
  const sentences: string[] = [];
  for (const line of text.split(/\n+/)) {
    let start = 0;
    for (const match of line.matchAll(/[.!?]["'”’)\]]*\s+(?=["'“‘([]?[\p{Lu}\p{N}])/gu)) {
      const end = match.index + match[0].trimEnd().length;
      if (line[match.index] === '.' && endsWithAbbreviation(line.slice(start, match.index))) continue;
      pushTrimmed(sentences, line.slice(start, end));
      start = match.index + match[0].length;
    }
    pushTrimmed(sentences, line.slice(start));
  }
  return sentences;
}

function endsWithAbbreviation(before: string): boolean {
  const word = /([\p{L}.]+)$/u.exec(before)?.[1];
  if (!word) return false;
  // A single capital ("J" of "J. Smith") is an initial, not the end of a sentence.
  if (/^\p{Lu}$/u.test(word)) return true;
  return ABBREVIATIONS.has(word.toLowerCase());
}

function pushTrimmed(sentences: string[], sentence: string): void {
  const trimmed = sentence.trim();
  if (trimmed.length > 0) sentences.push(trimmed);
}
