import { countTokens as countCl100k } from 'gpt-tokenizer/encoding/cl100k_base';

// Special-token text in a document ("<|endoftext|>") is just text here: counted, never refused.
const AS_TEXT = { disallowedSpecial: new Set<string>() };

/**
 * Tokens of `text` in cl100k_base, the encoding of OpenAI's embedding models (text-embedding-3-*,
 * ada-002), so a chunk that fits the budget fits the embedder. gpt-tokenizer ships its encodings:
 * nothing is downloaded.
 */
export function countTokens(text: string): number {
  return countCl100k(text, AS_TEXT);
}
