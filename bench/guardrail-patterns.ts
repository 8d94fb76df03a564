/**
 * `npm run bench:guardrails`: what a guardrail's patterns cost the worker's thread.
 *
 * 1. The built-in checks on adversarial texts: `pii_redaction` on the worst cases of its email, card and
 *    phone patterns, `deny_list` with `^(a+)+$` and `json_schema` on a fenced answer followed by spaces,
 *    each at 100,000 and 200,000 characters (`-- --sizes=100000` for one size): ms per check, and the
 *    ratio of the two sizes (2 for linear time, 4 for quadratic). `-- --only=pii` runs the cases whose
 *    name contains the text (on a backtracking engine the deny_list case never ends: leave it out there).
 * 2. The ReDoS query's effect on another tenant: a worker (in this process, on a private Redis and the
 *    scripted OpenAI-compatible server) serves tenant `neighbour`'s one-step `react-agent` run alone,
 *    then beside tenant `caller`'s run with `guardrails.input: [deny_list ^(a+)+$]` and the query
 *    `'a'.repeat(28) + '!'`: both runs' durations (enqueue to finish). `-- --skip-redos` leaves it out.
 *
 * The test (test/unit/guardrail-patterns.test.ts) asserts linearity structurally; the times are here.
 */
import { randomBytes } from 'node:crypto';
import { AgentClient } from '../producer/client/agent-client.js';
import { loadConfig } from '../shared/config/config.js';
import { createLogger } from '../shared/telemetry/logger.js';
import { fakeNodeContext } from '../testing/index.js';
import { builtInGuardrails } from '../worker/agents/guardrails/built-in-guardrails.js';
import { startWorker } from '../worker/start-worker.js';
import { startScriptedOpenAIServer } from '../test/fakes/scripted-openai-server.js';
import { openBenchRedis } from './lib/bench-redis.js';

const argument = (name: string) => process.argv.find((arg) => arg.startsWith(`--${name}`))?.split('=')[1] ?? '';
const sizes = (argument('sizes') || '100000,200000').split(',').map(Number);
const only = argument('only');
const guardrails = builtInGuardrails();
const guardrail = (name: string) => guardrails.find((candidate) => candidate.name === name)!;

// The worst case of each pattern on a backtracking engine, repeated to `size` characters.
const repeat = (unit: string, size: number) => unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
const CASES: { name: string; guardrail: string; options?: Record<string, unknown>; text(size: number): string }[] = [
  { name: 'pii: letters without an @', guardrail: 'pii_redaction', text: (size) => repeat('a', size) },
  {
    name: 'pii: an @ without a dot',
    guardrail: 'pii_redaction',
    text: (size) => repeat('a', size / 2) + '@' + repeat('b', size / 2 - 1),
  },
  { name: 'pii: labels without a domain', guardrail: 'pii_redaction', text: (size) => 'a@' + repeat('b.', size - 2) },
  { name: 'pii: digits', guardrail: 'pii_redaction', text: (size) => repeat('1', size) },
  { name: 'pii: digits and spaces', guardrail: 'pii_redaction', text: (size) => repeat('1 ', size) },
  { name: 'pii: digits and dashes', guardrail: 'pii_redaction', text: (size) => repeat('1-', size) },
  { name: 'pii: plus signs and digits', guardrail: 'pii_redaction', text: (size) => repeat('+1 ', size) },
  {
    name: 'deny_list ^(a+)+$',
    guardrail: 'deny_list',
    options: { patterns: ['^(a+)+$'] },
    text: (size) => repeat('a', size - 1) + '!',
  },
  {
    name: 'json_schema: fence then spaces',
    guardrail: 'json_schema',
    options: { schema: { type: 'object' } },
    // Spaces inside the JSON: /\s*```$/ tried from each of them scans to the end.
    text: (size) => '```json\n{"n":' + repeat(' ', size - 14) + '1}',
  },
];

function timeCheck(name: string, options: Record<string, unknown> | undefined, text: string): number {
  const check = guardrail(name);
  const context = {
    stage: 'output' as const,
    options: check.options.parse(options ?? {}),
    node: fakeNodeContext({}).context,
    checkDeadline: () => undefined,
  };
  const started = performance.now();
  void check.check(text, context);
  return performance.now() - started;
}

console.log('## Built-in checks on adversarial texts (ms per check)\n');
console.log(`| case | ${sizes.map((size) => `${size.toLocaleString('en')} chars`).join(' | ')} | ratio |`);
console.log(`|---|${sizes.map(() => '---|').join('')}---|`);
for (const { name, guardrail: guardrailName, options, text } of CASES.filter((one) => one.name.includes(only))) {
  timeCheck(guardrailName, options, text(1000)); // warm up
  const times = sizes.map((size) => timeCheck(guardrailName, options, text(size)));
  const ratio = times.length > 1 ? (times.at(-1)! / times[0]!).toFixed(1) : '—';
  console.log(`| ${name} | ${times.map((ms) => ms.toFixed(1)).join(' | ')} | ${ratio} |`);
}

if (!process.argv.includes('--skip-redos')) await redosBesideNeighbour();
process.exit(0);

async function redosBesideNeighbour(): Promise<void> {
  // A frozen thread makes Redis commands in flight time out (the finding itself): count them, go on.
  let lostCommands = 0;
  process.on('unhandledRejection', () => (lostCommands += 1));
  const redis = await openBenchRedis();
  const server = await startScriptedOpenAIServer({ script: () => ({ content: 'ok' }) });
  const id = randomBytes(3).toString('hex');
  const config = loadConfig({
    REDIS_URL: redis.url,
    AGENTQ_KEY_PREFIX: `bg${id}`,
    AGENTQ_QUEUE_PREFIX: `bgq${id}`,
    AGENTQ_LOG_LEVEL: 'silent',
    OPENAI_BASE_URL: server.url,
    LLM_MODEL: 'scripted-chat',
  });
  await startWorker({ config, logger: createLogger('silent'), reconciler: false });
  const neighbour = new AgentClient({ config, tenant: 'neighbour' });
  const caller = new AgentClient({ config, tenant: 'caller' });
  const timed = async (client: AgentClient, input: Record<string, unknown>) => {
    const started = Date.now();
    const queued = await client.enqueue({ graph: 'react-agent', input: { tools: [], ...input } });
    const done = await client.wait(queued.id, { timeoutMs: 600_000 });
    return { seconds: (Date.now() - started) / 1000, status: done.status, error: done.error?.code };
  };
  const oneStep = { query: 'What is 2 + 2?' };
  await timed(neighbour, oneStep); // warm up
  const alone = await timed(neighbour, oneStep);
  const redos = timed(caller, {
    query: 'a'.repeat(28) + '!',
    guardrails: { input: [{ name: 'deny_list', options: { patterns: ['^(a+)+$'] } }] },
  });
  // The caller's run first, as in the finding; the neighbour's one right behind it.
  await new Promise((resolve) => setTimeout(resolve, 50));
  const beside = await timed(neighbour, oneStep);
  const callerRun = await redos;
  console.log("\n## The ReDoS query beside another tenant's one-step run (s, enqueue to finish)\n");
  console.log('| run | seconds | status |');
  console.log('|---|---|---|');
  console.log(`| neighbour alone | ${alone.seconds.toFixed(2)} | ${alone.status} |`);
  console.log(`| neighbour beside the ReDoS run | ${beside.seconds.toFixed(2)} | ${beside.status} |`);
  console.log(
    `| caller (deny_list ^(a+)+$, 'a'×28 + '!') | ${callerRun.seconds.toFixed(2)} | ${callerRun.status}${callerRun.error ? ` ${callerRun.error}` : ''} |`,
  );
  console.log(`\nRedis commands that timed out while the thread was held: ${lostCommands}`);
  // The worker and clients end with the process (a frozen step would hold a graceful close).
  await redis.close();
  await server.close();
}
