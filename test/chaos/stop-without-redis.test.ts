import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentClient } from '../../producer/client/agent-client.js';
import { recordFigure } from '../helpers/suite-figures.js';
import { eventually, testConfig } from '../helpers/test-env.js';
import { loadScaledMs } from '../helpers/load-scale.js';
import { killHard } from '../helpers/worker-processes.js';
import { nodeEntry, repoRoot } from '../helpers/node-entry.js';
import { waitForReadiness } from '../helpers/process-readiness.js';
import { startRestartableRedis, type RestartableRedis } from './redis-restartable.js';

const GRACE_MS = 2000;
const RELEASE_MS = 2000;
/** "A few seconds" beyond grace + release: a loaded machine's process start-up and exit. */
const EXIT_BOUND_MS = GRACE_MS + RELEASE_MS + 8000;

interface Started {
  child: ChildProcess;
  lines: () => string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
}

/**
 * Starts `args` (a repository .ts entry and its arguments, run from dist/), resolves once stderr or stdout
 * shows `ready` (a log message or a line) however long a loaded machine takes.
 */
async function start(args: string[], env: Record<string, string>, ready: RegExp): Promise<Started> {
  const [entry, ...rest] = args;
  const child = spawn(process.execPath, [nodeEntry(entry!), ...rest], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, at: Date.now() })),
  );
  const lines = () => output.split('\n').filter((line) => line.trim() !== '');
  const collect = (chunk: Buffer) => (output += chunk.toString());
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  await waitForReadiness(child, { what: args.join(' '), signal: ready, on: 'either' });
  return { child, lines, exited };
}

/**
 * A process asked to stop as its Redis goes away at the same moment exits within
 * AGENTQ_SHUTDOWN_GRACE_MS + AGENTQ_SHUTDOWN_RELEASE_MS + a few seconds — the worker (with steps in
 * flight), `agentq api` and `agentq start` — and its last log line says what it could not release.
 * Before, the worker said `worker shutting down` and kept reconnecting every 2 s for minutes.
 */
describe('chaos: stopping while Redis goes away', () => {
  let redis: RestartableRedis | undefined;
  const processes: ChildProcess[] = [];
  let client: AgentClient | undefined;
  afterEach(async () => {
    await Promise.all(processes.splice(0).map((child) => killHard(child)));
    await client?.close();
    await redis?.close();
  });

  it.each([
    { role: 'worker', args: ['test/chaos/chain-worker.ts'], ready: /^ready$/m, steps: true },
    { role: 'agentq api', args: ['bin/agentq.ts', 'api', '--port', '0'], ready: /agentq API listening/, steps: false },
    { role: 'agentq start', args: ['bin/agentq.ts', 'start'], ready: /agentq is running/, steps: true },
  ])(
    '$role: SIGTERM as Redis is killed → exits by grace + release + a few seconds, naming what it left',
    async ({ role, args, ready, steps }) => {
      redis = await startRestartableRedis();
      const config = testConfig({ REDIS_URL: redis.url });
      const env = {
        REDIS_URL: redis.url,
        AGENTQ_KEY_PREFIX: config.keyPrefix,
        AGENTQ_QUEUE_PREFIX: config.queuePrefix,
        AGENTQ_LOG_LEVEL: 'info',
        AGENTQ_SHUTDOWN_GRACE_MS: String(GRACE_MS),
        AGENTQ_SHUTDOWN_RELEASE_MS: String(RELEASE_MS),
        AGENTQ_INGEST_CONCURRENCY: '0',
        EMBED_PROVIDER: 'none',
        PORT: '0',
      };
      const started = await start(args, env, ready);
      processes.push(started.child);
      if (steps) {
        // Steps in flight: chain runs whose steps sleep, so the stop finds them active.
        client = new AgentClient({ config });
        const runs = await Promise.all(
          Array.from({ length: 4 }, () => client!.enqueue({ graph: 'chain', input: { steps: 50, sleepMs: 400 } })),
        );
        await eventually(
          async () => (await Promise.all(runs.map((run) => client!.get(run.id)))).every((run) => run!.stepCount > 0),
          20_000,
          'every run to commit a step',
        );
        await client.close();
        client = undefined;
      }
      const termAt = Date.now();
      await redis.kill();
      started.child.kill('SIGTERM');
      const exit = await Promise.race([
        started.exited,
        new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), EXIT_BOUND_MS + 20_000)),
      ]);
      const stopMs = exit ? exit.at - termAt : undefined;
      const logged = started.lines();
      recordFigure({
        scenario: 'stop without Redis',
        name: `${role.replace(/\W+/g, '_')}_sigterm_to_exit_ms`,
        value: stopMs ?? 'no exit',
        goal: `≤ grace ${GRACE_MS} + release ${RELEASE_MS} + a few s`,
      });
      expect(exit, `no exit; its log ends:\n${logged.slice(-5).join('\n')}`).toMatchObject({ code: 0, signal: null });
      expect(stopMs).toBeLessThan(EXIT_BOUND_MS);
      // The last lines say what could not be released (Redis was gone), by name.
      const last = logged
        .map((line) => {
          try {
            return JSON.parse(line) as { msg?: string; notReleased?: string[] };
          } catch {
            return {};
          }
        })
        .filter((entry) => entry.msg?.includes('stopped'));
      expect(last.length, logged.slice(-8).join('\n')).toBeGreaterThan(0);
      if (steps) {
        // A worker held steps, locks and connections that Redis's absence kept it from letting go of.
        const notReleased = last.flatMap((entry) => entry.notReleased ?? []);
        expect(notReleased.length, logged.slice(-8).join('\n')).toBeGreaterThan(0);
        expect(last.some((entry) => entry.msg?.includes('worker stopped without releasing'))).toBe(true);
      }
    },
    loadScaledMs(60_000),
  );
});
