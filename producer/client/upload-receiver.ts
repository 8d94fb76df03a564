import { randomBytes } from 'node:crypto';
import type { RedisConnection } from '../../shared/redis/connect-redis.js';
import { AgentqError } from '../../shared/contracts/errors.js';
import type { DocumentKeys } from '../../shared/store/keys.js';
import { writeBlobStream } from '../../shared/store/documents/write-blob-stream.js';

/** A file of an upload whose bytes are in Redis already (under `uploadKey`), not in memory. */
export interface ReceivedDocument {
  name: string;
  uploadKey: string;
  contentHash: string;
  bytes: number;
}

/** An upload went over a size limit; `details.limit` names the setting. Nothing of the request is kept. */
export class UploadTooLargeError extends AgentqError {
  constructor(message: string, details: { limit: 'AGENTQ_UPLOAD_MAX_BYTES' | 'AGENTQ_INGEST_MAX_BYTES'; max: number }) {
    super('INVALID_INPUT', message, { details });
    this.name = 'UploadTooLargeError';
  }
}

interface UploadReceiverOptions {
  /** Bytes of all files together (AGENTQ_UPLOAD_MAX_BYTES). */
  maxBytes: number;
  /** Bytes of one file (AGENTQ_INGEST_MAX_BYTES). */
  fileMaxBytes: number;
  /** How long a received file's bytes live in Redis if the upload is never handed in (the API died). */
  ttlSeconds: number;
}

/**
 * The files of one upload request, streamed into Redis as they arrive (writeBlobStream) and counted
 * against the request's and each file's byte limit. Nothing is visible to anyone until `IngestClient`
 * hands the received files in (renaming each to its blob); `discard` removes what was received, so a
 * request refused midway (413, a broken body) leaves nothing behind and changes no document.
 */
export class UploadReceiver {
  readonly received: ReceivedDocument[] = [];
  private readonly id = randomBytes(8).toString('hex');
  private readonly written: string[] = [];
  private totalBytes = 0;

  constructor(
    private readonly redis: RedisConnection,
    private readonly keys: DocumentKeys,
    private readonly options: UploadReceiverOptions,
  ) {}

  /** Streams one file into Redis; throws UploadTooLargeError as soon as a limit is passed. */
  async receive(name: string, source: AsyncIterable<Uint8Array>): Promise<ReceivedDocument> {
    const { maxBytes, fileMaxBytes, ttlSeconds } = this.options;
    const uploadKey = this.keys.upload(`${this.id}.${this.written.length}`);
    this.written.push(uploadKey);
    const before = this.totalBytes;
    const fileLimitFirst = fileMaxBytes <= maxBytes - before;
    const blob = await writeBlobStream(this.redis, uploadKey, source, {
      ttlSeconds,
      maxBytes: Math.min(fileMaxBytes, maxBytes - before),
      tooLarge: (bytes) =>
        fileLimitFirst
          ? new UploadTooLargeError(
              `file '${name}' is larger than ${fileMaxBytes} bytes, the limit per document (AGENTQ_INGEST_MAX_BYTES); nothing of this request was kept: send it without that file`,
              { limit: 'AGENTQ_INGEST_MAX_BYTES', max: fileMaxBytes },
            )
          : new UploadTooLargeError(
              `the files of this request add up to more than ${maxBytes} bytes (at least ${before + bytes} by file '${name}'), the limit per request (AGENTQ_UPLOAD_MAX_BYTES); nothing of this request was kept: send the files in several requests`,
              { limit: 'AGENTQ_UPLOAD_MAX_BYTES', max: maxBytes },
            ),
    });
    this.totalBytes += blob.bytes;
    const received = { name, uploadKey, ...blob };
    this.received.push(received);
    return received;
  }

  /** Removes every file this upload wrote (the request was refused or broke off). */
  async discard(): Promise<void> {
    if (this.written.length === 0) return;
    // One DEL: the keys share the tenant's documents tag (one Cluster slot). Keys already handed in were renamed away.
    await this.redis.del(...this.written);
  }
}
