import { Worker } from 'node:worker_threads';
import { AgentqError } from '../../shared/contracts/errors.js';
import { threadModuleUrl } from '../../shared/contracts/thread-module.js';
import type { Logger } from '../../shared/telemetry/logger.js';
import type { ParseReply, ParseRequest } from './parse-messages.js';

type ParseResult = Extract<ParseReply, { ok: true }>;

interface ParsePoolOptions {
  /** Threads at most (documents parsed at once). @default 2 */
  size?: number;
  /** A document still parsing after this long fails, and its thread is replaced. @default 120000 */
  timeoutMs?: number;
  /** Heap limit of each thread: a document that needs more fails alone instead of taking the process down. @default 2048 */
  maxHeapMb?: number;
  logger?: Logger;
}

interface Task {
  request: Omit<ParseRequest, 'id'>;
  resolve(result: ParseResult): void;
  reject(error: AgentqError): void;
}

interface Thread {
  worker: Worker;
  ready: boolean;
  task: (Task & { id: number; timer: NodeJS.Timeout }) | null;
}

/** A parse thread (parse-thread.ts), started from its compiled module (threadModuleUrl says why). */
function startThread(maxHeapMb: number): Worker {
  return new Worker(threadModuleUrl('parse-thread', import.meta.url), {
    resourceLimits: { maxOldGenerationSizeMb: maxHeapMb },
  });
}

/**
 * A few worker threads that parse and chunk documents (parse-thread.ts), started on first use. A thread
 * that crashes (out of memory on a hostile file) or overruns the timeout fails only its document, with
 * a PARSE_ERROR, and is replaced.
 */
export class ParsePool {
  private readonly size: number;
  private readonly timeoutMs: number;
  private readonly maxHeapMb: number;
  private readonly logger: Logger | undefined;
  private readonly threads: Thread[] = [];
  private readonly waiting: Task[] = [];
  private nextId = 1;
  private closed = false;

  constructor({ size = 2, timeoutMs = 120_000, maxHeapMb = 2048, logger }: ParsePoolOptions = {}) {
    this.size = Math.max(1, size);
    this.timeoutMs = timeoutMs;
    this.maxHeapMb = maxHeapMb;
    this.logger = logger;
  }

  /** Parses and chunks one document; rejects with UNSUPPORTED_FORMAT or PARSE_ERROR when it cannot be indexed. */
  parse(request: Omit<ParseRequest, 'id'>): Promise<ParseResult> {
    if (this.closed)
      return Promise.reject(
        new AgentqError('UNAVAILABLE', 'the parse pool is closed (the worker is shutting down)', { retryable: true }),
      );
    return new Promise((resolve, reject) => {
      this.waiting.push({ request, resolve, reject });
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const task of this.waiting.splice(0))
      task.reject(new AgentqError('UNAVAILABLE', 'the worker is shutting down', { retryable: true }));
    await Promise.all(this.threads.splice(0).map((thread) => thread.worker.terminate()));
  }

  private dispatch(): void {
    while (this.waiting.length > 0) {
      let thread = this.threads.find((candidate) => candidate.ready && !candidate.task);
      if (!thread) {
        if (this.threads.length < this.size) this.spawn();
        return; // a thread that becomes ready or free dispatches again
      }
      const task = this.waiting.shift()!;
      const id = this.nextId++;
      const timer = setTimeout(
        () =>
          this.fail(
            thread!,
            new AgentqError(
              'PARSE_ERROR',
              `parsing took longer than ${this.timeoutMs} ms (AGENTQ_INGEST_PARSE_TIMEOUT_MS) and was stopped; the document may be huge or malformed`,
            ),
          ),
        this.timeoutMs,
      );
      thread.task = { ...task, id, timer };
      // A copy, transferred: the thread owns its bytes and the caller's buffer stays intact.
      const bytes = new Uint8Array(task.request.bytes);
      thread.worker.postMessage({ ...task.request, bytes, id } satisfies ParseRequest, [bytes.buffer]);
      thread = undefined;
    }
  }

  private spawn(): void {
    const thread: Thread = { worker: startThread(this.maxHeapMb), ready: false, task: null };
    this.threads.push(thread);
    thread.worker.on('message', (message: ParseReply | { ready: true }) => {
      if ('ready' in message) {
        thread.ready = true;
      } else if (thread.task && message.id === thread.task.id) {
        const task = thread.task;
        clearTimeout(task.timer);
        thread.task = null;
        if (message.ok) task.resolve(message);
        else task.reject(new AgentqError(message.code, message.message, { retryable: false }));
      }
      this.dispatch();
    });
    thread.worker.on('error', (error) => {
      this.logger?.warn({ err: error.message }, 'parse thread crashed');
      this.fail(thread, new AgentqError('PARSE_ERROR', `the parser crashed on this document (${error.message})`));
    });
    thread.worker.on('exit', () =>
      this.fail(thread, new AgentqError('PARSE_ERROR', 'the parser thread stopped while parsing this document')),
    );
  }

  /** Fails the thread's document, drops the thread (terminating it if alive) and lets the next one start. */
  private fail(thread: Thread, error: AgentqError): void {
    const index = this.threads.indexOf(thread);
    if (index < 0) return;
    this.threads.splice(index, 1);
    const task = thread.task;
    thread.task = null;
    if (task) {
      clearTimeout(task.timer);
      task.reject(error);
    } else if (!thread.ready) {
      // It never started: fail what waits rather than respawning in a loop.
      for (const waiting of this.waiting.splice(0))
        waiting.reject(
          new AgentqError('INTERNAL', `a parse thread could not start (${error.message})`, { retryable: true }),
        );
    }
    void thread.worker.terminate();
    if (!this.closed) this.dispatch();
  }
}
