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
      if (line[match.index] === '.' && endsWithAbbreviation(line, start, match.index)) continue;
      pushTrimmed(sentences, line.slice(start, end));
      start = match.index + match[0].length;
    }
    pushTrimmed(sentences, line.slice(start));
  }
  return sentences;
}

/** Whether `line.slice(start, end)` ends with an abbreviation or an initial. */
function endsWithAbbreviation(line: string, start: number, end: number): boolean {
  const word = lastWord(line, start, end);
  if (!word) return false;
  // A single capital ("J" of "J. Smith") is an initial, not the end of a sentence.
  if (/^\p{Lu}$/u.test(word)) return true;
  return ABBREVIATIONS.has(word.toLowerCase());
}

/**
 * The letters and periods `line.slice(start, end)` ends with (`/([\p{L}.]+)$/u`), scanned back from the
 * end: the regex tries every position of the text before it, which made this most of splitting's cost.
 */
function lastWord(line: string, start: number, end: number): string | undefined {
  let from = end;
  while (from > start) {
    const code = line.charCodeAt(from - 1);
    if (code === 46 || (code >= 65 && code <= 90) || (code >= 97 && code <= 122)) from -= 1;
    else if (code < 128) break;
    // A letter of another script (or a surrogate pair): the regex, as it was.
    else return /([\p{L}.]+)$/u.exec(line.slice(start, end))?.[1];
  }
  return from < end ? line.slice(from, end) : undefined;
}

function pushTrimmed(sentences: string[], sentence: string): void {
  const trimmed = sentence.trim();
  if (trimmed.length > 0) sentences.push(trimmed);
}
