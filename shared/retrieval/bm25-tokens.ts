import stem from 'wink-porter2-stemmer';
import { BoundedMemo } from '../contracts/bounded-memo.js';
import { ENGLISH_STOPWORDS } from './english-stopwords.js';

/** Longer tokens are dropped (hashes, base64, run-together garbage), as fastembed's `token_max_length`. */
const MAX_TOKEN_LENGTH = 40;

/** Letters with no decomposition that ASCII folding still maps (Lucene's ASCIIFoldingFilter does the same). */
const LATIN_LIGATURES: Readonly<Record<string, string>> = {
  ß: 'ss',
  æ: 'ae',
  œ: 'oe',
  ø: 'o',
  đ: 'd',
  ł: 'l',
  þ: 'th',
  ð: 'd',
  ı: 'i',
};

// Any UTF-16 unit above U+007F (surrogates included): text that is not plain ASCII.
const NON_ASCII = /[\u0080-\uffff]/;
const SEPARATORS = /[^\p{L}\p{M}\p{N}_]+/u;
const ASCII_SEPARATORS = /[^a-z0-9_]+/;

/**
 * Porter2 stems of words seen before. Stemming is most of the cost of tokenizing (rag-agent ranks every
 * retrieved passage sentence by sentence for each answer), and words repeat: a bounded memo makes it a
 * map lookup. Cleared when full, so memory stays bounded whatever the input.
 */
const stems = new BoundedMemo<string, string>({ limit: 50_000 });

/**
 * The terms BM25 counts in `text`, in order, repeats kept — the pipeline of Qdrant's `qdrant/bm25`
 * with `ascii_folding: true` (and of fastembed's `Qdrant/bm25` plus folding):
 *
 * 1. lowercase, and fold Latin diacritics and ligatures (`Zèbre` → `zebre`, `Straße` → `strasse`), so a
 *    query typed without accents finds accented text — the embedded store (FTS5 `remove_diacritics`)
 *    behaves the same;
 * 2. split on every character that is not a letter, a combining mark, a digit or `_` — so search syntax
 *    in user text (`"`, `*`, `:`, `(`) is only a separator and can never make a query fail;
 * 3. drop English stopwords and tokens longer than 40 characters;
 * 4. stem with Porter2 (Snowball English, as fastembed's `py_rust_stemmers`).
 *
 * Unlike fastembed, combining marks of non-Latin scripts stay inside their word (Devanagari vowel signs
 * would otherwise split words apart); Latin text — what the stemmer and stopwords are for — is unaffected.
 */
export function bm25Tokens(text: string): string[] {
  // ASCII text (most English prose) has nothing to fold and only [a-z0-9_] as word characters: the same
  // terms without the Unicode normalisation and property classes, which are most of the cost.
  const ascii = !NON_ASCII.test(text);
  const folded = ascii
    ? text.toLowerCase()
    : text
        .toLowerCase()
        .normalize('NFKD')
        .replace(/(\p{Script=Latin})\p{M}+/gu, '$1')
        .normalize('NFC')
        .replace(/[ßæœøđłþðı]/g, (letter) => LATIN_LIGATURES[letter] ?? letter);
  const terms: string[] = [];
  for (const token of folded.split(ascii ? ASCII_SEPARATORS : SEPARATORS)) {
    if (token.length === 0 || ENGLISH_STOPWORDS.has(token)) continue;
    if ((ascii ? token.length : [...token].length) > MAX_TOKEN_LENGTH) continue;
    const term = stems.getOrSet(token, stem);
    if (term.length > 0) terms.push(term);
  }
  return terms;
}
