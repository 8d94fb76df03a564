import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyGraph } from '../../shared/graph/graph.js';
import type { StepObserver } from '../../shared/graph/step-observer.js';
import { runInProcess, type InProcessResult } from '../../testing/index.js';
import { contractGraphs } from '../helpers/contract-graphs.js';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';

/** A step as both sides record it: where it ran, which node, on which attempt, and the update it returned. */
interface LoggedStep {
  superstep: number;
  task: number;
  node: string;
  attempts: number;
  update: unknown;
}

const graphs = contractGraphs();
const named = (name: string): AnyGraph => graphs.find((graph) => graph.name === name)!;

/** What each node returned on a worker (its update and messages), by run, superstep and task: the step records do not keep it. */
const returned = new Map<string, unknown>();
const observer: StepObserver = {
  onNodeEnd(observation) {
    if (observation.outcome !== 'ok') return;
    returned.set(`${observation.runId}/${observation.superstep}/${observation.task}`, observation.output);
  },
};

function updateOf(output: unknown): unknown {
  const { messages: _messages, ...update } = (output ?? {}) as Record<string, unknown>;
  return JSON.parse(JSON.stringify(update));
}

describe('the in-process runner and a worker on Redis keep the same step log', () => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await startTestEnv({ graphs, observers: [observer] });
  });
  afterAll(async () => env.close());

  /** The worker's log of a run: its steps in superstep and task order, the final record and history. */
  async function workerLog(runId: string) {
    const record = await env.client.wait(runId);
    const records = (await env.client.steps(runId)).sort((a, b) => a.superstep - b.superstep || a.task - b.task);
    // The observer hears of a step after its commit, so the last one may come after the run is done.
    await eventually(
      async () => records.every(({ superstep, task }) => returned.has(`${runId}/${superstep}/${task}`)),
      15_000,
      `the observations of run ${runId}'s steps`,
    );
    const steps: LoggedStep[] = records.map(({ superstep, task, node, attempts }) => ({
      superstep,
      task,
      node,
      attempts,
      update: updateOf(returned.get(`${runId}/${superstep}/${task}`)),
    }));
    return {
      status: record.status,
      output: record.output ?? null,
      interrupt: record.interrupt ?? null,
      steps,
      messages: await env.client.messages(runId),
    };
  }

  function runnerLog(result: InProcessResult) {
    return {
      status: result.status,
      output: result.output ?? null,
      interrupt: result.interrupt ?? null,
      steps: result.steps.map(({ superstep, task, node, attempts, update }) => ({
        superstep,
        task,
        node,
        attempts,
        update,
      })),
      messages: result.messages,
    };
  }

  const cases: [string, unknown][] = [
    ['contract-chain', null],
    ['contract-router', { n: 2 }],
    ['contract-fan-out', { items: [3, 1, 2] }],
    ['contract-subgraph', null],
    ['contract-retry', null],
  ];
  it.each(cases)('%s: same steps, updates, messages and output', async (name, input) => {
    const queued = await env.client.enqueue({ graph: name, input });
    const onWorker = await workerLog(queued.id);
    const inProcess = runnerLog(await runInProcess(named(name), input));
    expect(onWorker.status).toBe('completed');
    expect(inProcess.steps.length).toBeGreaterThan(0);
    expect(inProcess).toEqual(onWorker);
  });

  it('contract-interrupt: same log when waiting, and after the resume', async () => {
    const queued = await env.client.enqueue({ graph: 'contract-interrupt', input: null });
    const waitingOnWorker = await workerLog(queued.id);
    const waiting = await runInProcess(named('contract-interrupt'), null);
    expect(waitingOnWorker.status).toBe('waiting');
    expect(runnerLog(waiting)).toEqual(waitingOnWorker);

    await env.client.resume(queued.id, { approved: true });
    const doneOnWorker = await workerLog(queued.id);
    const done = await waiting.resume({ approved: true });
    expect(doneOnWorker.status).toBe('completed');
    expect(runnerLog(done)).toEqual(doneOnWorker);
  });
});
