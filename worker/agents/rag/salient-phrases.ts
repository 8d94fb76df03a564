/**
 * Capitalised words that start sentences or clauses far more often than they name something, so a
 * phrase made of one of them alone is not an entity ("The", "However").
 */
const FUNCTION_WORDS = new Set(
  'a an the in on at it its he she they his her hers their them this that these those there here after before during when while however also as for from with by of and but or if is was were are be been then thus since although though because until unless what which who whom whose where why how all both each some many most other such no not only one two three first new'.split(
    ' ',
  ),
);

/** Capitalised but naming a date, which links to nothing. */
const MONTHS_AND_DAYS = new Set(
  'january february march april may june july august september october november december monday tuesday wednesday thursday friday saturday sunday'.split(
    ' ',
  ),
);

/** Lower-case words that may sit inside a name ("Bank of England", "Leonardo da Vinci", "Kiss and Tell"). */
const NAME_JOINERS = new Set([
  'of',
  'the',
  'and',
  'de',
  'der',
  'den',
  'von',
  'van',
  'del',
  'della',
  'da',
  'di',
  'du',
  'la',
  'le',
  'y',
  'al',
  'bin',
  'el',
]);

const WORD = /[\p{L}\p{M}\p{N}][\p{L}\p{M}\p{N}'’.&-]*/gu;

/**
 * Names in `text` — runs of capitalised words ("Shirley Temple", "Kiss and Tell", "United States
 * Department of State", "Apollo 11": a number may end a name) — in order of first appearance, each
 * once. They are what a second search hop looks for: a passage about one thing names the things it
 * links to. A leading function word ("The", "However") is cut off; months and weekdays are not names.
 */
export function salientPhrases(text: string): string[] {
  const phrases: string[] = [];
  const seen = new Set<string>();
  let run: string[] = [];
  let joiners: string[] = [];
  const flush = () => {
    while (run.length > 0 && FUNCTION_WORDS.has(run[0]!.toLowerCase())) run.shift();
    const phrase = run.join(' ');
    const key = phrase.toLowerCase();
    if (phrase.length >= 3 && !seen.has(key)) {
      seen.add(key);
      phrases.push(phrase);
    }
    run = [];
    joiners = [];
  };
  let previousEnd = 0;
  for (const match of text.matchAll(WORD)) {
    const word = match[0].replace(/[.'’&-]+$/, '');
    const gap = text.slice(previousEnd, match.index);
    previousEnd = match.index + match[0].length;
    // Punctuation between two words (a comma, a bracket, a dash) ends a name.
    if (/\S/.test(gap)) flush();
    if (/^\p{Lu}/u.test(word) && !MONTHS_AND_DAYS.has(word.toLowerCase())) {
      run.push(...joiners, word);
      joiners = [];
    } else if (run.length > 0 && joiners.length === 0 && /^\d+$/.test(word)) {
      run.push(word);
      flush();
    } else if (run.length > 0 && NAME_JOINERS.has(word) && joiners.length < 2) {
      joiners.push(word);
    } else {
      flush();
    }
    // A full stop, comma or colon right after a word ends the name, unless it marks an initial ("J.").
    if (/[.!?,;:]$/.test(match[0]) && !/^\p{Lu}\.$/u.test(match[0])) flush();
  }
  flush();
  return phrases;
}
