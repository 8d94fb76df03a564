/**
 * LangGraph.js in the peers bench: a graph of STEPS nodes with the Postgres checkpointer
 * (PostgresSaver on the private PostgreSQL at BENCH_POSTGRES_URL) and durability 'sync', so each
 * step's checkpoint is written before the next step starts (the guarantee agentq's commit gives).
 * A run is one `invoke` on its own thread_id. LangGraph has no queue: after a crash the application
 * must invoke the unfinished threads again (`resume`), which then go on from their last checkpoint.
 */
import type { StepTiming } from '../../lib/step-timings.js';
import { peerRequire } from '../scratch.js';
import { stepBody } from '../peer-step-body.js';
import { STEPS, type StepKind } from '../peer-steps.js';
import { reportFinished, servePeer } from './serve-peer.js';

type Config = { configurable: { thread_id: string; kind: StepKind }; durability: 'sync' };
interface Compiled {
  invoke(input: object | null, config: Config): Promise<{ answers: string[] }>;
  getState(config: Config): Promise<{ next: string[]; values: { answers?: string[] } }>;
}
interface Builder {
  addNode(name: string, fn: (state: unknown, config: Config) => Promise<object>): Builder;
  addEdge(from: string, to: string): Builder;
  compile(options: { checkpointer: unknown }): Compiled;
}
interface LangGraph {
  Annotation: {
    Root(spec: object): unknown;
    <T>(options?: { reducer: (left: T, right: T) => T; default: () => T }): unknown;
  };
  StateGraph: new (state: unknown) => Builder;
  START: string;
  END: string;
}
interface PostgresSaverClass {
  fromConnString(url: string): { setup(): Promise<void>; end(): Promise<void> };
}

const { Annotation, StateGraph, START, END } = peerRequire<LangGraph>('@langchain/langgraph');
const { PostgresSaver } = peerRequire<{ PostgresSaver: PostgresSaverClass }>(
  '@langchain/langgraph-checkpoint-postgres',
);
const timings = new Map<string, StepTiming[]>();
const body = stepBody(timings);

const State = Annotation.Root({
  answers: Annotation<string[]>({ reducer: (left, right) => left.concat(right), default: () => [] }),
});
const saver = PostgresSaver.fromConnString(process.env.BENCH_POSTGRES_URL!);
await saver.setup();
const builder = new StateGraph(State);
for (let index = 0; index < STEPS; index += 1) {
  builder.addNode(`s${index}`, async (_state, config) => ({
    answers: [await body(config.configurable.thread_id, index, config.configurable.kind)],
  }));
  builder.addEdge(index === 0 ? START : `s${index - 1}`, `s${index}`);
}
builder.addEdge(`s${STEPS - 1}`, END);
const app = builder.compile({ checkpointer: saver });
const config = (runId: string, kind: StepKind): Config => ({
  configurable: { thread_id: runId, kind },
  durability: 'sync',
});

async function runToEnd(runId: string, kind: StepKind, input: object | null): Promise<void> {
  const final = await app.invoke(input, config(runId, kind));
  if (final.answers.length !== STEPS)
    throw new Error(`BENCH_LANGGRAPH_RUN: thread ${runId} ended with ${final.answers.length} answers`);
  reportFinished(runId);
}

servePeer(
  {
    runOne: (runId, kind) => runToEnd(runId, kind, {}),
    async submit(runId, kind) {
      // Nothing durable accepts the run before its first checkpoint: it simply starts here.
      void runToEnd(runId, kind, {}).catch(() => undefined);
    },
    async resume(runIds, kind) {
      for (const runId of runIds) {
        const state = await app.getState(config(runId, kind));
        // A thread never checkpointed starts over; one with steps left goes on from its checkpoint.
        const started = (state.values.answers?.length ?? 0) > 0 || state.next.length > 0;
        void runToEnd(runId, kind, started ? null : {}).catch(() => undefined);
      }
    },
    close: () => saver.end(),
  },
  timings,
);
