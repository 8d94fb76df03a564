/**
 * MurmurHash3, x86 32-bit variant, over the UTF-8 bytes of `text` — the same function as Python's
 * `mmh3.hash(text, seed, signed=False)` and the token hash of fastembed's `Qdrant/bm25` and Qdrant's
 * server-side `qdrant/bm25`. Returns an unsigned 32-bit integer.
 */
export function murmurHash3(text: string, seed = 0): number {
  const bytes = new TextEncoder().encode(text);
  const blocks = bytes.length >>> 2;
  const c1 = 0xcc9e2d51;
  const c2 = 0x1b873593;
  let hash = seed >>> 0;
  for (let block = 0; block < blocks; block += 1) {
    const offset = block * 4;
    let word = bytes[offset]! | (bytes[offset + 1]! << 8) | (bytes[offset + 2]! << 16) | (bytes[offset + 3]! << 24);
    word = Math.imul(word, c1);
    word = (word << 15) | (word >>> 17);
    word = Math.imul(word, c2);
    hash ^= word;
    hash = (hash << 13) | (hash >>> 19);
    hash = (Math.imul(hash, 5) + 0xe6546b64) | 0;
  }
  const tail = blocks * 4;
  let rest = 0;
  switch (bytes.length & 3) {
    case 3:
      rest ^= bytes[tail + 2]! << 16;
    // falls through
    case 2:
      rest ^= bytes[tail + 1]! << 8;
    // falls through
    case 1:
      rest ^= bytes[tail]!;
      rest = Math.imul(rest, c1);
      rest = (rest << 15) | (rest >>> 17);
      rest = Math.imul(rest, c2);
      hash ^= rest;
  }
  hash ^= bytes.length;
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash >>> 0;
}

/**
 * A token's index in the sparse vector: `abs(mmh3.hash(token))` of the signed hash, as fastembed's
 * `Bm25.compute_token_id` and Qdrant's `qdrant/bm25` do, so our vectors share their index space.
 */
export function bm25TokenId(token: string): number {
  const unsigned = murmurHash3(token);
  const signed = unsigned | 0;
  return Math.abs(signed);
}
