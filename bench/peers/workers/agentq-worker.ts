/**
 * agentq in the peers bench: a worker as `agentq start` runs one, from the built package (dist/, as
 * users run it; `npm run bench:peers` builds first), config from the environment, the reconciler on,
 * with the `bench-peer` graph. Reports each finished run over IPC and, on request, the node start/end
 * times it saw (the protocol of bench/workers/engine-worker.ts, so engine-loop.ts drives it).
 * BENCH_AGENTQ_ROOT names another checkout (`--agentq-root`): this script, compiled, then runs that
 * checkout's built package and zod, so an older checkout without this file is measured the same way.
 */
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type * as Zod from 'zod';
import type * as Agentq from '../../../index.js';
import type * as Agents from '../../../worker/agents/index.js';
import type * as AgentqWorker from '../../../worker/index.js';
import type { StepTiming } from '../../lib/step-timings.js';
import { buildPeerGraph } from '../agentq-peer-graph.js';

const root = process.env.BENCH_AGENTQ_ROOT ?? fileURLToPath(new URL('../../..', import.meta.url));
// Each door by name, through that checkout's package.json "exports", as a user's import resolves it.
const resolveThere = createRequire(join(root, 'package.json')).resolve;
const load = <T>(specifier: string) => import(pathToFileURL(resolveThere(specifier)).href) as Promise<T>;
/**
 * zod's ES module entry, as a user's `import { z } from 'zod'` loads it and agentq's doors do: resolved
 * through `require`, the CommonJS build, a second copy of zod that cost the start ~0.15 s more.
 */
function esmEntry(name: string): string {
  const manifest = resolveThere(`${name}/package.json`);
  const { exports } = JSON.parse(readFileSync(manifest, 'utf8')) as { exports: { '.': { import: string } } };
  return join(dirname(manifest), exports['.'].import);
}
const zodPath = esmEntry('zod');
const [agentq, agents, { startWorker }, { z }] = await Promise.all([
  load<typeof Agentq>('agentq'),
  load<typeof Agents>('agentq/agents'),
  load<typeof AgentqWorker>('agentq/worker'),
  import(pathToFileURL(zodPath).href) as Promise<typeof Zod>,
]);

const observations = new Map<string, StepTiming[]>();
const observer: AgentqWorker.StepObserver = {
  onRunFinished(runId, status) {
    process.send?.({ type: 'finished', runId, status });
  },
  onNodeEnd(observation) {
    const list = observations.get(observation.runId) ?? [];
    list.push({ superstep: observation.superstep, startedAt: observation.startedAt, endedAt: observation.endedAt! });
    observations.set(observation.runId, list);
  },
};
const worker = await startWorker({
  config: agentq.loadConfig(),
  graphs: [buildPeerGraph(agentq, agents, z)],
  observers: [observer],
});
process.on('message', (message: { type: string; runIds?: string[] }) => {
  if (message.type === 'observations') {
    const wanted = Object.fromEntries((message.runIds ?? []).map((runId) => [runId, observations.get(runId) ?? []]));
    observations.clear();
    process.send?.({ type: 'observations', observations: wanted });
  }
  if (message.type === 'stop') void worker.close().then(() => process.exit(0));
});
process.send?.({ type: 'ready' });
