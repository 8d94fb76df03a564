import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { AgentqError } from '../../../shared/errors.js';
import type { DenseNeighbour } from './dense-vector-cache.js';

// Plain CommonJS run with `eval: true` (as the local embedder's threads): its own read-only connection
// to the store's file, with sqlite-vec loaded, answering one SQL query at a time.
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.betterSqlite3);
const sqliteVec = require(workerData.sqliteVec);
const db = new Database(workerData.path, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = 5000');
sqliteVec.load(db);
const statements = new Map();
parentPort.on('message', ({ id, sql, params }) => {
  try {
    let statement = statements.get(sql);
    if (!statement) statements.set(sql, (statement = db.prepare(sql)));
    const rows = statement.all(...params.map((param) => (param && param.float32 ? new Float32Array(param.float32) : param)));
    parentPort.postMessage({ id, ok: true, rows });
  } catch (error) {
    parentPort.postMessage({ id, ok: false, message: String((error && error.message) || error) });
  }
});
`;

type Reply = { id: number; ok: true; rows: { rowid: number; distance: number }[] } | { id: number; ok: false; message: string };

/**
 * Runs sqlite-vec's k-nearest-neighbours queries in a worker thread with its own read-only connection,
 * so the brute-force scan never blocks the event loop (design (b) of issue 25's search cost; compared
 * with DenseVectorCache by bench/dense-search.ts). Queries queue in the one thread.
 */
export class DenseSearchThread {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, { resolve(rows: DenseNeighbour[]): void; reject(error: unknown): void }>();
  private nextId = 1;

  constructor(private readonly path: string) {}

  /** `sql` returns `rowid` and `distance` (cosine distance) columns; a Float32Array parameter travels as such. */
  run(sql: string, params: readonly unknown[]): Promise<DenseNeighbour[]> {
    const worker = this.start();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.ref();
      worker.postMessage({ id, sql, params: params.map((param) => (param instanceof Float32Array ? { float32: param } : param)) });
    });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    await worker?.terminate();
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const require = createRequire(import.meta.url);
    const worker = new Worker(THREAD, { eval: true, workerData: { path: this.path, betterSqlite3: require.resolve('better-sqlite3'), sqliteVec: require.resolve('sqlite-vec') } });
    worker.unref();
    worker.on('message', (reply: Reply) => {
      const waiting = this.pending.get(reply.id);
      if (!waiting) return;
      this.pending.delete(reply.id);
      if (this.pending.size === 0) worker.unref();
      if (reply.ok) waiting.resolve(reply.rows.map((row) => ({ rowid: row.rowid, similarity: 1 - row.distance })));
      else waiting.reject(new AgentqError('INTERNAL', `dense search failed: ${reply.message}`, { retryable: true }));
    });
    const fail = (what: string) => {
      if (this.worker === worker) this.worker = null;
      for (const waiting of this.pending.values()) waiting.reject(new AgentqError('UNAVAILABLE', `the dense search thread ${what}`, { retryable: true }));
      this.pending.clear();
    };
    worker.on('error', (error) => fail(`crashed (${error.message})`));
    worker.on('exit', () => fail('stopped'));
    this.worker = worker;
    return worker;
  }
}
