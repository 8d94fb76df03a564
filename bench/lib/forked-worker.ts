import { fork, type ChildProcess } from 'node:child_process';
import { isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** A benchmark worker process (one of `bench/workers/*`) driven over IPC. */
export interface ForkedWorker {
  readonly child: ChildProcess;
  /** Rejects when the process exits before `stop()` (race a measurement against it). */
  readonly failed: Promise<never>;
  /** Called with each `{type: 'finished', runId, status?}` message the worker sends (one listener at a time). */
  onFinished(listener: (runId: string, status: string | undefined) => void): void;
  /** Sends `message` and resolves with the next message of type `replyType`. */
  request<T>(message: object, replyType: string): Promise<T>;
  /** Asks the worker to close (`{type: 'stop'}`) and waits for it to exit. */
  stop(): Promise<void>;
  /** SIGKILL (a crash, on purpose); resolves when the process is gone. */
  kill(): Promise<void>;
}

/**
 * Forks `script` (a path from the repository root, or an absolute one) under tsx with `env` over this
 * process's environment, and resolves once it sends `{type: 'ready'}`. Its stderr is passed through.
 * `execArgv` adds Node options (e.g. `--expose-gc`); `root` forks the script of another checkout
 * (a before/after comparison, bench/model-step-cost.ts); `tsx: false` runs a compiled .mjs as plain
 * Node, so its start-up pays no loader hooks (bench/peers/compile-workers.ts).
 */
export async function forkWorker(
  script: string,
  env: Record<string, string>,
  { execArgv = [], root: from = root, tsx = true }: { execArgv?: string[]; root?: string; tsx?: boolean } = {},
): Promise<ForkedWorker> {
  const child = fork(isAbsolute(script) ? script : join(from, script), [], {
    execArgv: [...(tsx ? ['--import', 'tsx'] : []), ...execArgv],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  let listener: (runId: string, status: string | undefined) => void = () => undefined;
  const replies = new Map<string, (value: unknown) => void>();
  child.on('message', (message: { type: string; runId?: string; status?: string }) => {
    if (message.type === 'finished') listener(message.runId!, message.status);
    replies.get(message.type)?.(message);
  });
  let stopping = false;
  // A worker that dies mid-measurement must fail the section, not leave it waiting for ever.
  const died = new Promise<never>((_resolve, reject) => {
    child.once('exit', (code, signal) => {
      if (!stopping) reject(new Error(`BENCH_WORKER_EXIT: ${script} exited (code ${code}, signal ${signal})`));
    });
  });
  died.catch(() => undefined);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const alive = () => child.exitCode === null && child.signalCode === null;
  await Promise.race([new Promise<void>((resolve) => replies.set('ready', () => resolve())), died]);
  return {
    child,
    failed: died,
    onFinished: (next) => (listener = next),
    request<T>(message: object, replyType: string) {
      if (!alive()) return Promise.reject(new Error(`BENCH_WORKER_GONE: ${script} is not running`));
      const reply = new Promise<T>((resolve) => replies.set(replyType, (value) => resolve(value as T)));
      child.send(message);
      return Promise.race([reply, died]);
    },
    stop() {
      if (stopping || !alive()) return exited;
      stopping = true;
      child.send({ type: 'stop' });
      return exited;
    },
    kill() {
      stopping = true;
      if (alive()) child.kill('SIGKILL');
      return exited;
    },
  };
}
