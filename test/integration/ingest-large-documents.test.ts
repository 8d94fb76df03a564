import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { IngestClient } from '../../producer/client/ingest-client.js';
import type { Config } from '../../shared/config/config.js';
import { tempDirectory } from '../helpers/ingest-fixtures.js';
import { startSlowTcpProxy } from '../helpers/slow-tcp-proxy.js';
import { testConfig } from '../helpers/test-env.js';

const MB = 1024 * 1024;

/** 20 MB of text: the size of the 10-Q filings that broke ingestion on a busy machine. */
function twentyMegabytes(): Buffer {
  const line = Buffer.from('Revenue rose in the quarter; operating cash flow covered the dividend and the buyback.\n');
  return Buffer.concat(Array.from({ length: Math.ceil((20 * MB) / line.length) }, () => line)).subarray(0, 20 * MB);
}

function through(config: Config, port: number): Config {
  return { ...config, redisUrl: `redis://127.0.0.1:${port}` };
}

describe('ingesting large documents through a slow Redis', () => {
  const files = tempDirectory('agentq-ingest-large-');
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });
  afterAll(() => files.remove());

  it('hands in a 20 MB document over a link with 50 ms latency and 5 MB/s, under the 750 ms command timeout', async () => {
    const config = testConfig({ AGENTQ_INGEST_MAX_BYTES: String(64 * MB), AGENTQ_REDIS_COMMAND_TIMEOUT_MS: '750' });
    expect(config.redisCommandTimeoutMs).toBe(750);
    const direct = new URL(config.redisUrl!);
    // Small commands take ~100 ms here (well inside 750 ms, even on a busy machine); the 20 MB take ~4 s
    // on the wire, so one SET of the whole file cannot finish within the command timeout.
    const proxy = await startSlowTcpProxy({ targetPort: Number(direct.port), latencyMs: 50, bytesPerSecond: 5 * MB });
    closers.push(proxy.close);
    const bytes = twentyMegabytes();
    const path = join(files.path, 'filing-10q.txt');
    writeFileSync(path, bytes);
    const slow = new IngestClient({ config: through(config, proxy.port) });
    closers.push(() => slow.close());
    const batch = await slow.ingest([path], { collection: 'filings' });
    expect(batch.documents).toMatchObject([{ status: 'queued' }]);

    // What a worker reads is the whole document, byte for byte.
    const reader = new IngestClient({ config });
    closers.push(() => reader.close());
    const record = await reader.getDocument(batch.documents[0]!.docId!);
    const stored = await reader.documents.content(config.tenant, record!.id, record!.pendingHash!);
    expect(stored?.byteLength).toBe(bytes.byteLength);
    expect(stored?.equals(bytes)).toBe(true);
  });

  it('a hand-in that breaks off fails its batch with the reason, and the error says what happened and what to do', async () => {
    const config = testConfig({ AGENTQ_INGEST_MAX_BYTES: String(64 * MB), AGENTQ_INGEST_WRITE_TIMEOUT_MS: '1500' });
    const direct = new URL(config.redisUrl!);
    // A Redis that stops reading after 3 MB on a connection: small commands pass, the big document hangs.
    const proxy = await startSlowTcpProxy({
      targetPort: Number(direct.port),
      latencyMs: 0,
      blackholeAfterBytes: 3 * MB,
    });
    closers.push(proxy.close);
    writeFileSync(join(files.path, 'a-small.txt'), 'A small memo about lichens.');
    writeFileSync(join(files.path, 'b-filing.txt'), twentyMegabytes());
    writeFileSync(join(files.path, 'c-small.txt'), randomBytes(16).toString('hex'));
    const slow = new IngestClient({ config: through(config, proxy.port) });
    closers.push(() => slow.close());
    type HandInError = Error & { code?: string; details?: { batchId: string } };
    const outcome: unknown = await slow
      .ingest([join(files.path, 'a-small.txt'), join(files.path, 'b-filing.txt'), join(files.path, 'c-small.txt')], {
        collection: 'stuck',
      })
      .catch((failure: unknown) => failure);
    expect(outcome).toBeInstanceOf(Error);
    const error = outcome as HandInError;
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.message).toMatch(
      /handing documents to Redis failed \(Command timed out\) while writing 2 document\(s\), 20\.0 MB; 3 of 3 document\(s\) were not handed in and are marked failed in batch ing_\w+\. Check that Redis is up and not overloaded .* ingest again/,
    );

    const reader = new IngestClient({ config });
    closers.push(() => reader.close());
    const progress = await reader.progress(error.details!.batchId);
    expect(progress).toMatchObject({
      total: 3,
      failed: 3,
      done: 0,
      finished: true,
      error: expect.stringMatching(/handing documents to Redis failed/),
    });
    expect(progress?.documents.map((document) => document.status)).toEqual(['failed', 'failed', 'failed']);
  });
});
