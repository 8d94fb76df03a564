/**
 * `npm run bench:worker-start -- [--root <checkout>]... [--starts N] [--kills N] [--runs N]`: how soon a
 * worker takes steps, from the built `dist/` as users run it, and how soon work interrupted by a
 * `kill -9` is done. Each `--root` is another built checkout (an older commit, say), measured in the same
 * turns so a change in the machine's load falls on all of them; without one, this checkout alone.
 *
 * - `worker_ready_ms_cli`: `agentq worker` (the CLI), spawn → the first `step-start` of a `chain` run
 *   queued before it started (the event's stream id time, Redis's clock on this machine). Median of
 *   `--starts` (default 7).
 * - `worker_ready_ms_library`: the same for a worker script as a user writes it (`agentq/worker`,
 *   `agentq/agents`, one graph of model calls), whose first run makes one model call.
 * - `worker_ready_cpu_ms_cli`, `…_library`: the CPU time (all threads) the worker had used by then, from
 *   /proc: on a loaded machine wall time is mostly waiting for a core.
 * - `kill_to_done_ms`: `--runs` (default 100) runs of 10 model calls each (scripted model, 0 ms) in
 *   flight on one library worker (concurrency 100); at half of the calls answered it is SIGKILLed and a
 *   new one started at once: the kill → every run completed. Median of `--kills` rounds (default 3).
 *   `kill_to_all_resumed_ms`: the kill → the last run's first model request after it (every run's
 *   work resumed; what follows is throughput, which a loaded machine slows most). `kill_paid_twice` (sum
 *   over the rounds): calls answered more than once for the same step (must be 0), over all rounds; an
 *   answer sent within 100 ms before a kill may never have been read, and its step's call made again is
 *   counted apart (`kill_calls_cut`).
 *
 * Writes bench/results/worker-start-latest.json.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { AgentClient } from '../producer/client/agent-client.js';
import { loadConfig } from '../shared/config/config.js';
import { startScriptedOpenAIServer, type ScriptedChatRequest } from '../test/fakes/scripted-openai-server.js';
import { repoRoot } from '../test/helpers/node-entry.js';
import { benchEnv, waitFor } from './lib/bench-runs.js';
import { openBenchRedis } from './lib/bench-redis.js';
import { percentile, round } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    root: { type: 'string', multiple: true, default: [] },
    starts: { type: 'string', default: '7' },
    kills: { type: 'string', default: '3' },
    runs: { type: 'string', default: '100' },
  },
});
const roots = values.root.length === 0 ? [repoRoot] : values.root.map((root) => resolve(root));
const log = (line: string) => process.stderr.write(`${line}\n`);
const scratch = mkdtempSync(join(tmpdir(), 'agentq-bench-start-'));

/**
 * A user's worker script against one checkout's built package, as plain JavaScript (no TypeScript loader to
 * pay for): each door by name, through that checkout's package.json "exports", as a user's import resolves it.
 */
function libraryWorker(root: string, index: number): string {
  const door = (specifier: string) => pathToFileURL(createRequire(join(root, 'package.json')).resolve(specifier)).href;
  const file = join(scratch, `worker-${index}.mjs`);
  writeFileSync(
    file,
    `import { defineGraph, channel, START, END } from '${door('agentq')}';
import { startWorker } from '${door('agentq/worker')}';
import { callLanguageModel } from '${door('agentq/agents')}';
const graph = defineGraph({
  name: 'model-chain',
  state: { steps: channel.replace(0), next: channel.replace(0) },
  initialState: (input) => ({ steps: input.steps, next: 0 }),
  output: (state) => ({ steps: state.next }),
})
  .node('ask', async (state, context) => {
    await callLanguageModel(context, {
      messages: [{ role: 'user', content: 'step ' + state.next + ' (' + context.runId + ' ' + context.stepId + ' attempt ' + context.attempt + ')' }],
    });
    return { next: state.next + 1 };
  })
  .edge(START, 'ask')
  .route('ask', (state) => (state.next < state.steps ? 'ask' : END), ['ask', END])
  .build();
const worker = await startWorker({ graphs: [graph], builtInGraphs: false });
process.once('SIGTERM', () => void worker.close().then(() => process.exit(0)));
`,
  );
  return file;
}

interface Target {
  name: string;
  cli: string;
  library: string;
}

const targets: Target[] = roots.map((root, index) => ({
  name: roots.length === 1 ? '' : `${basename(root)}_`,
  cli: join(root, 'dist/bin/agentq.js'),
  library: libraryWorker(root, index),
}));

function spawnWorker(args: string[], env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr!.on('data', (chunk: Buffer) => {
    const text = chunk.toString();
    if (/"level":(50|60)|Error/.test(text)) log(`  worker: ${text.trim().slice(0, 300)}`);
  });
  return child;
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((done) => child.once('exit', () => done()));
}

async function stopWorker(child: ChildProcess): Promise<void> {
  child.kill('SIGTERM');
  await exited(child);
}

/** CPU time (user + system, all threads) `pid` has used, ms, from /proc; NaN where there is none. */
function cpuMsOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // utime and stime are fields 14 and 15 of the whole line, in clock ticks (100 a second on Linux).
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return Number.NaN;
  }
}

/**
 * ms from `since` to the first `step-start` of `runId` (the event's stream id time), and the CPU the
 * worker `pid` had used when it was seen (a figure a loaded machine moves much less than wall time).
 */
async function firstStepStart(
  client: AgentClient,
  runId: string,
  since: number,
  pid: number,
): Promise<{ ms: number; cpuMs: number }> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    for (const event of await client.store.eventLog.events(runId, { count: 100 }))
      if (event.type === 'step-start') return { ms: Number(event.id.split('-')[0]) - since, cpuMs: cpuMsOf(pid) };
    await new Promise((done) => setTimeout(done, 20));
  }
  throw new Error(`run ${runId} took no step within 60 s of its worker's start`);
}

async function readyOnce(
  redisUrl: string,
  modelUrl: string,
  args: string[],
  graph: string,
  input: Record<string, unknown>,
): Promise<{ ms: number; cpuMs: number }> {
  const env = benchEnv(redisUrl, { OPENAI_BASE_URL: modelUrl, OPENAI_API_KEY: 'bench', LLM_MODEL: 'scripted-chat' });
  const client = new AgentClient({ config: loadConfig(env) });
  try {
    const { id } = await client.enqueue({ graph, input }, { queueUnserved: true });
    const spawnedAt = Date.now();
    const child = spawnWorker(args, env);
    try {
      return await firstStepStart(client, id, spawnedAt, child.pid!);
    } finally {
      await stopWorker(child);
    }
  } finally {
    await client.close();
  }
}

async function killRound(
  redisUrl: string,
  modelUrl: string,
  target: Target,
  runs: number,
  answered: () => number,
): Promise<{ doneMs: number; resumedMs: number; twice: number; cut: number }> {
  const env = benchEnv(redisUrl, {
    OPENAI_BASE_URL: modelUrl,
    OPENAI_API_KEY: 'bench',
    LLM_MODEL: 'scripted-chat',
    AGENTQ_WORKER_CONCURRENCY: String(runs),
  });
  const client = new AgentClient({ config: loadConfig(env) });
  const workers: ChildProcess[] = [];
  try {
    const first = spawnWorker([target.library], env);
    workers.push(first);
    const roundStart = model.chatRequests().length;
    const before = answered();
    // Queued whether or not the new worker has said yet that it serves the graph.
    const ids = await Promise.all(
      Array.from({ length: runs }, async () => {
        const run = await client.enqueue({ graph: 'model-chain', input: { steps: 10 } }, { queueUnserved: true });
        return run.id;
      }),
    );
    await waitFor(() => answered() - before >= runs * 5, 60_000, 'half of the model calls answered', log);
    first.kill('SIGKILL');
    const killedAt = Date.now();
    await exited(first);
    // From here on every model request is the new worker's.
    const requestsBefore = model.chatRequests().length;
    workers.push(spawnWorker([target.library], env));
    const pending = new Set(ids);
    while (pending.size > 0) {
      if (Date.now() - killedAt > 120_000) throw new Error(`${pending.size} runs not done 120 s after the kill`);
      const records = await Promise.all([...pending].map((id) => client.get(id)));
      for (const record of records)
        if (record && ['completed', 'failed', 'cancelled'].includes(record.status)) {
          if (record.status !== 'completed') throw new Error(`run ${record.id} ended ${record.status}`);
          pending.delete(record.id);
        }
      if (pending.size > 0) await new Promise((done) => setTimeout(done, 20));
    }
    // Each run's first model request after the kill: the last of them is when every run had resumed.
    const resumed = new Map<string, number>();
    for (const request of model.chatRequests().slice(requestsBefore)) {
      const runId = /\((\S+) \S+ attempt/.exec(JSON.stringify(request.body))?.[1];
      if (runId && !resumed.has(runId)) resumed.set(runId, request.receivedAt);
    }
    const resumedAt = resumed.size === 0 ? Number.NaN : Math.max(...resumed.values());
    const doneMs = Date.now() - killedAt;
    return { doneMs, resumedMs: resumedAt - killedAt, ...paidTwice(model.chatRequests().slice(roundStart), killedAt) };
  } finally {
    await Promise.all(workers.map(stopWorker));
    await client.close();
  }
}

/**
 * Each prompt names `<runId> <stepId>`: a step asked again after an answer had been sent is paid twice
 * (`twice`, must be 0), unless that answer went out within CUT_MS before the kill, when the killed
 * process may never have read it (`cut`: asked again by design, as a call cut off by the kill). On a
 * loaded machine a worker can take longer than CUT_MS to read an answer, which then counts as `twice`:
 * the chaos suites (test/chaos/paid-claims, workers-killed) are the proof, this a figure.
 */
function paidTwice(requests: ScriptedChatRequest[], killedAt: number): { twice: number; cut: number } {
  const CUT_MS = 100;
  const firstAnswer = new Map<string, number>();
  let twice = 0;
  let cut = 0;
  for (const request of requests) {
    if (request.outcome !== 'answered') continue;
    const step = /\((\S+ \S+) attempt/.exec(JSON.stringify(request.body))?.[1] ?? 'unknown';
    const earlier = firstAnswer.get(step);
    if (earlier === undefined) firstAnswer.set(step, request.answeredAt!);
    else if (earlier <= killedAt && killedAt - earlier < CUT_MS) cut += 1;
    else twice += 1;
  }
  return { twice, cut };
}

const redis = await openBenchRedis();
const model = await startScriptedOpenAIServer({ script: () => ({ content: 'ok' }) });
const answered = () => model.chatRequests().filter((request) => request.outcome === 'answered').length;
const samples = new Map<string, number[]>();
const add = (name: string, value: number) => samples.set(name, [...(samples.get(name) ?? []), value]);
try {
  log(`redis: ${redis.description}; roots: ${roots.join(', ')}`);
  for (const target of Number(values.starts) > 0 ? targets : []) {
    // Warm the file cache (a cold disk is not the worker's cost).
    await readyOnce(redis.url, model.url, [target.cli, 'worker'], 'chain', { steps: 1 });
    await readyOnce(redis.url, model.url, [target.library], 'model-chain', { steps: 1 });
  }
  for (let turn = 1; turn <= Number(values.starts); turn += 1) {
    const line: string[] = [];
    for (const target of targets) {
      const cli = await readyOnce(redis.url, model.url, [target.cli, 'worker'], 'chain', { steps: 1 });
      const library = await readyOnce(redis.url, model.url, [target.library], 'model-chain', { steps: 1 });
      add(`${target.name}worker_ready_ms_cli`, cli.ms);
      add(`${target.name}worker_ready_cpu_ms_cli`, cli.cpuMs);
      add(`${target.name}worker_ready_ms_library`, library.ms);
      add(`${target.name}worker_ready_cpu_ms_library`, library.cpuMs);
      line.push(
        `${target.name || 'this '}cli ${cli.ms} ms (${cli.cpuMs} ms CPU), library ${library.ms} ms (${library.cpuMs} ms CPU)`,
      );
    }
    log(`start ${turn}: ${line.join('; ')}`);
  }
  for (let turn = 1; turn <= Number(values.kills); turn += 1) {
    const line: string[] = [];
    for (const target of targets) {
      const { doneMs, resumedMs, twice, cut } = await killRound(
        redis.url,
        model.url,
        target,
        Number(values.runs),
        answered,
      );
      add(`${target.name}kill_to_done_ms`, doneMs);
      add(`${target.name}kill_to_all_resumed_ms`, resumedMs);
      add(`${target.name}kill_paid_twice`, twice);
      add(`${target.name}kill_calls_cut`, cut);
      line.push(
        `${target.name || 'this '}${doneMs} ms (every run calling again after ${resumedMs} ms; paid twice ${twice}, cut ${cut})`,
      );
    }
    log(`kill ${turn}: kill → all done ${line.join('; ')}`);
  }
  const figures: Record<string, number> = {};
  for (const [name, values] of samples)
    figures[name] = /paid_twice|calls_cut/.test(name)
      ? values.reduce((sum, value) => sum + value, 0)
      : round(percentile(values, 50), 0);
  for (const [name, value] of Object.entries(figures)) process.stdout.write(`${name}=${value}\n`);
  mkdirSync(join(repoRoot, 'bench/results'), { recursive: true });
  writeFileSync(
    join(repoRoot, 'bench/results/worker-start-latest.json'),
    `${JSON.stringify({ at: new Date().toISOString(), roots, figures, samples: Object.fromEntries(samples) }, null, 2)}\n`,
  );
} finally {
  await model.close();
  await redis.close();
  rmSync(scratch, { recursive: true, force: true });
}
