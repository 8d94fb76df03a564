import type { RedisConnection } from '../../redis/connect-redis.js';

/**
 * Bytes per command when a document goes into Redis. A 16 MB PDF in one SET occupies Redis (and the
 * socket) for the whole transfer, and fails as a whole under a sub-second command timeout on a busy
 * machine; 1 MiB pieces keep each command short, so other clients interleave between them.
 */
export const BLOB_PIECE_BYTES = 1024 * 1024;
/** Pieces in flight at once: enough to fill a slow link, few enough to bound the memory queued in ioredis. */
const PIECES_IN_FLIGHT = 4;

/**
 * Writes `content` to `key` in pieces (SET the first, APPEND the rest, EXPIRE at the end). A reader only
 * ever reads the key after the document's record and job exist, which come after this resolves, so a
 * half-written blob is never read; a hand-in that fails midway leaves a partial key that the next try
 * overwrites (SET) or the retention expires.
 */
export async function writeBlob(
  redis: RedisConnection,
  key: string,
  content: Uint8Array,
  ttlSeconds: number,
): Promise<void> {
  const piece = (index: number) => {
    const start = index * BLOB_PIECE_BYTES;
    return Buffer.from(
      content.buffer,
      content.byteOffset + start,
      Math.min(BLOB_PIECE_BYTES, content.byteLength - start),
    );
  };
  const pieces = Math.max(1, Math.ceil(content.byteLength / BLOB_PIECE_BYTES));
  await redis.set(key, piece(0), 'EX', ttlSeconds);
  let next = 1;
  const lane = async () => {
    // APPENDs must land in order: each lane takes the next index only after the previous APPEND was
    // *sent*; ioredis sends on one connection in call order, so order holds across lanes.
    while (next < pieces) {
      const index = next;
      next += 1;
      await redis.append(key, piece(index));
    }
  };
  await Promise.all(Array.from({ length: Math.min(PIECES_IN_FLIGHT, pieces - 1) }, lane));
  await redis.expire(key, ttlSeconds);
}
