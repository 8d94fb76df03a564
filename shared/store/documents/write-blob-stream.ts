import { createHash } from 'node:crypto';
import type { RedisConnection } from '../../redis/connect-redis.js';
import { AgentqError } from '../../contracts/errors.js';
import { BLOB_PIECE_BYTES } from './write-blob.js';

/** What a streamed blob came to: its size and sha256 (the document's content hash). */
interface StreamedBlob {
  bytes: number;
  contentHash: string;
}

interface WriteBlobStreamOptions {
  /** The key expires after this long unless renamed and given another TTL. */
  ttlSeconds: number;
  /** More bytes than this: `tooLarge(bytes)` is thrown at once, nothing more is read. */
  maxBytes: number;
  tooLarge: (bytes: number) => Error;
}

/**
 * Writes what `source` yields to `key` as it arrives, in BLOB_PIECE_BYTES pieces (SET the first, APPEND
 * the rest), hashing on the way. At most one piece is being written while the next one is read, so the
 * memory held is about two pieces whatever the size; reading waits for Redis, which slows the sender
 * instead of filling this process (a 320 MB upload took the API from 177 to 456 MB). Checks
 * at the end that Redis holds every byte (a key that expired midway would have lost its beginning).
 */
export async function writeBlobStream(
  redis: RedisConnection,
  key: string,
  source: AsyncIterable<Uint8Array>,
  { ttlSeconds, maxBytes, tooLarge }: WriteBlobStreamOptions,
): Promise<StreamedBlob> {
  const hash = createHash('sha256');
  let bytes = 0;
  let chunks: Uint8Array[] = [];
  let pieceBytes = 0;
  let written = 0;
  let writing: Promise<unknown> = Promise.resolve();
  const flush = async () => {
    const piece = Buffer.concat(chunks, pieceBytes);
    chunks = [];
    pieceBytes = 0;
    await writing;
    writing = written === 0 ? redis.set(key, piece, 'EX', ttlSeconds) : redis.append(key, piece);
    // Awaited at the next piece or the end; a failure meanwhile must not be an unhandled rejection.
    writing.catch(() => undefined);
    written += 1;
  };
  for await (const chunk of source) {
    bytes += chunk.byteLength;
    if (bytes > maxBytes) throw tooLarge(bytes);
    hash.update(chunk);
    chunks.push(chunk);
    pieceBytes += chunk.byteLength;
    if (pieceBytes >= BLOB_PIECE_BYTES) await flush();
  }
  if (pieceBytes > 0 || written === 0) await flush();
  await writing;
  const stored = await redis.strlen(key);
  if (stored !== bytes)
    throw new AgentqError(
      'UNAVAILABLE',
      `Redis holds ${stored} of the ${bytes} bytes written to ${key} (the key expired or was removed meanwhile); send the document again`,
      { retryable: true },
    );
  return { bytes, contentHash: hash.digest('hex') };
}
