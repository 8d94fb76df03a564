/** Cosine similarity of two vectors of the same length (0 when either is all zeros). */
export function cosineSimilarity(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let position = 0; position < a.length; position += 1) {
    const x = a[position]!;
    const y = b[position] ?? 0;
    dot += x * y;
    normA += x * x;
    normB += y * y;
  }
  return normA === 0 || normB === 0 ? 0 : dot / Math.sqrt(normA * normB);
}
