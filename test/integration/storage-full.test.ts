import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { IngestClient } from '../../producer/client/ingest-client.js';
import { SqliteVectorStore } from '../../shared/adapters/sqlite/sqlite-vector-store.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { recordFigure } from '../helpers/suite-figures.js';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';

/**
 * A full disk under the embedded store, for real: a small tmpfs (mounting one needs root, as CI's
 * container runs) holds the SQLite file, and a filler file takes the rest of its space.
 */
const SMALL_DISK = '8m';
const DOCUMENTS = 24;
const WINDOW_MS = Number(process.env.FULL_DISK_WINDOW_MS ?? 5000);

/** Why a small file system cannot be mounted here ('' when it can). */
function mountUnavailable(): string {
  const probe = mkdtempSync(join(tmpdir(), 'agentq-disk-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe], { stdio: 'pipe' });
    execFileSync('umount', [probe], { stdio: 'pipe' });
    return '';
  } catch (error) {
    return `cannot mount a small tmpfs to fill (${String(error).split('\n')[0]}): needs root in a container that allows mount`;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}
const unavailable = mountUnavailable();
if (unavailable) console.warn(`storage-full tests skipped: ${unavailable}`);

/** Writes a file until the disk refuses (ENOSPC): the disk is full. */
function fill(path: string): void {
  const fd = openSync(path, 'w');
  const block = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) writeSync(fd, block);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
}

/** A document of about `kb` KiB of distinct words (so its chunks need new pages of the store). */
function document(index: number, kb: number): { name: string; content: Uint8Array } {
  const words: string[] = [];
  for (let size = 0, n = 0; size < kb * 1024; n += 1) {
    const word = `doc${index}word${n.toString(36)}`;
    words.push(n % 12 === 11 ? `${word}.` : word);
    size += word.length + 1;
  }
  return { name: `doc-${index}.txt`, content: new TextEncoder().encode(words.join(' ')) };
}

describe.skipIf(unavailable !== '')('a full disk under the embedded store', () => {
  let disk = '';
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  function mountDisk(): string {
    disk = mkdtempSync(join(tmpdir(), 'agentq-full-disk-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${SMALL_DISK}`, 'tmpfs', disk]);
    const path = disk;
    cleanups.push(() => {
      execFileSync('umount', ['-l', path]);
      rmSync(path, { recursive: true, force: true });
    });
    return path;
  }

  it('a write to the store on a full disk is STORAGE_FULL naming the file; it lands once there is room', async () => {
    const path = join(mountDisk(), 'vectors.sqlite');
    const store = new SqliteVectorStore({ path });
    cleanups.push(() => store.close());
    const filler = join(disk, 'filler');
    fill(filler);
    const { content } = document(0, 256);
    const records = [{ id: 'c0', text: new TextDecoder().decode(content), payload: { docId: 'd0' } }];
    const refused = await store.upsert('t', 'full', records).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toMatchObject({ code: 'STORAGE_FULL', retryable: true, details: { path } });
    expect((refused as Error).message).toContain(path);
    rmSync(filler);
    await store.upsert('t', 'full', records);
    expect(await store.count('t', { collection: 'full' })).toBe(1);
  });

  it('ingest waits for space with gated warnings and indexes every accepted document once space returns', async () => {
    const dataDir = mountDisk();
    const lines: string[] = [];
    const logger = createLogger('info', {}, { write: (line: string) => void lines.push(line) });
    const env: TestEnv = await startTestEnv({ env: { AGENTQ_DATA_DIR: dataDir }, logger });
    const ingest = new IngestClient({ config: env.config });
    cleanups.push(async () => {
      await ingest.close();
      await env.close();
    });
    // The store's file exists (and its schema) before the disk fills.
    const warm = await ingest.ingest([document(0, 4)], { collection: 'disk' });
    expect(await ingest.wait(warm.batchId, { timeoutMs: 60_000 })).toMatchObject({ done: 1, failed: 0 });
    const filler = join(dataDir, 'filler');
    fill(filler);
    const documents = Array.from({ length: DOCUMENTS }, (_, index) => document(index + 1, 64));
    const batch = await ingest.ingest(documents, { collection: 'disk' });
    // The first refusal, whatever it is called (before STORAGE_FULL it was a retried INTERNAL): then the window.
    await eventually(
      async () => lines.some((line) => /STORAGE_FULL|ingest attempt failed/.test(line)),
      60_000,
      'a full-disk failure',
    );
    const before = lines.length;
    await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
    const logged = lines.length - before;
    recordFigure({
      scenario: 'full disk',
      name: `log_lines_in_${WINDOW_MS / 1000}s`,
      value: logged,
      goal: '≤ 2 per kind per AGENTQ_WARN_INTERVAL_MS',
    });
    const full = lines.find((line) => line.includes('STORAGE_FULL'));
    expect(full, 'a warning with code STORAGE_FULL').toBeDefined();
    expect(full).toContain(join(dataDir, 'vectors.sqlite'));
    // Nothing given up while the disk is full: every document still waits.
    expect(await ingest.progress(batch.batchId, { documents: false })).toMatchObject({ done: 0, failed: 0 });
    // Per kind of warning, one line per interval (AGENTQ_WARN_INTERVAL_MS, 10 s by default) and one with the
    // count held back, however many documents wait: the full disk's, and the worker's lost locks of parked jobs.
    expect(logged, lines.slice(before).join('')).toBeLessThanOrEqual(2 * 2 * (Math.ceil(WINDOW_MS / 10_000) + 1));
    rmSync(filler);
    const done = await ingest.wait(batch.batchId, { timeoutMs: 120_000 });
    expect(done).toMatchObject({ total: DOCUMENTS, done: DOCUMENTS, failed: 0 });
    expect(done.documents.map((item) => item.status)).toEqual(Array(DOCUMENTS).fill('indexed'));
  }, 240_000);
});
