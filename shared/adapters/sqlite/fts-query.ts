/** Words as FTS5's unicode61 tokenizer sees them: runs of letters, digits and combining marks. */
const WORD = /[\p{L}\p{N}\p{M}]+/gu;
/** Enough for any question; a pasted page would otherwise make one query scan the whole index per word. */
const MAX_QUERY_TERMS = 64;

/**
 * English function words. They occur in nearly every chunk, so they add almost nothing to BM25 but make
 * an OR query score every row: dropping them (when the query has other words) made HotpotQA questions
 * ~4× faster and ranked slightly better. Queries made only of them are kept as they are.
 */
const STOPWORDS = new Set(
  'a an and are as at be been being but by did do does for from had has have he her him his how if in into is it its me my not of on or our she so than that the their them then there these they this those to was we were what when where which who whom why will with you your'.split(
    ' ',
  ),
);

/**
 * User text as an FTS5 MATCH expression that cannot be a syntax error: every word becomes a quoted
 * string (FTS5 operators, column filters, `*`, `^`, quotes and parentheses in the input are only
 * separators then), joined with OR so that BM25 ranks documents by how many and how rare the words
 * they contain are, as a search box would. Returns null when the text has no word at all.
 */
export function toFtsQuery(text: string, maxTerms = MAX_QUERY_TERMS): string | null {
  const words = new Set<string>();
  for (const match of text.normalize('NFC').toLowerCase().matchAll(WORD)) {
    words.add(match[0]);
    if (words.size >= maxTerms) break;
  }
  if (words.size === 0) return null;
  const content = [...words].filter((word) => !STOPWORDS.has(word));
  // Quotes cannot occur in a word; doubling them anyway keeps this safe if WORD ever changes.
  return (content.length > 0 ? content : [...words]).map((word) => `"${word.replaceAll('"', '""')}"`).join(' OR ');
}
