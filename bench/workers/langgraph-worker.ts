/**
 * The peer: the same 10-node model-calling graph (bench/lib/model-graph.ts) on LangGraph.js with its
 * SQLite checkpointer (SqliteSaver on the file BENCH_LANGGRAPH_DB), in this one process. Each node makes
 * the same chat request through the same openai-SDK adapter agentq's nodes use, to the scripted server at
 * OPENAI_BASE_URL, and appends the answer to the state, as agentq's does.
 *
 * What LangGraph's figures include (so the comparison stays fair): per superstep, the node's writes and a
 * checkpoint of the whole state written to SQLite (WAL journal, as SqliteSaver sets it up), plus one
 * checkpoint for the input; a run is one `invoke` on its own thread_id. With its default durability
 * ('async') the checkpoint is written while the next step runs; 'sync' (BENCH_LANGGRAPH_DURABILITY)
 * writes it before, which is the guarantee agentq's commit gives. What it does not include: a queue, other
 * processes, crash recovery of a run whose process died, or the memo that saves each model response
 * before it is used; agentq's figures pay for those.
 *
 * IPC: `{type: 'measure', inFlight, runs}` → `{type: 'measured', elapsedMs, timings, checkpointsPerRun}`,
 * a closed loop of `runs` invocations with `inFlight` at once (each finish starts the next).
 */
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { OpenAILanguageModel } from '../../shared/adapters/openai/openai-language-model.js';
import { closedLoop } from '../lib/closed-loop.js';
import { MODEL_GRAPH_MODEL, MODEL_GRAPH_NODES, nodeName, nodeRequest } from '../lib/model-graph.js';
import type { StepTiming } from '../lib/step-timings.js';

const dbPath = process.env.BENCH_LANGGRAPH_DB!;
const durability = process.env.BENCH_LANGGRAPH_DURABILITY === 'sync' ? 'sync' : 'async';
const model = new OpenAILanguageModel({
  model: MODEL_GRAPH_MODEL,
  baseURL: process.env.OPENAI_BASE_URL!,
  apiKey: 'bench',
});
const timings = new Map<string, StepTiming[]>();

const State = Annotation.Root({
  answers: Annotation<string[]>({ reducer: (left, right) => left.concat(right), default: () => [] }),
});

function buildGraph() {
  // The node list is built in a loop; LangGraph's builder types each added node name, so widen it here.
  const graph = new StateGraph(State) as unknown as StateGraph<
    typeof State.spec,
    typeof State.State,
    typeof State.Update,
    string
  >;
  for (let index = 0; index < MODEL_GRAPH_NODES; index += 1) {
    graph.addNode(
      nodeName(index),
      async (_state: typeof State.State, config: { configurable?: { thread_id?: string } }) => {
        const startedAt = performance.now();
        const response = await model.generate(nodeRequest(index));
        const threadId = config.configurable?.thread_id ?? '';
        const list = timings.get(threadId) ?? [];
        list.push({ superstep: index, startedAt, endedAt: performance.now() });
        timings.set(threadId, list);
        return { answers: [response.message.content ?? ''] };
      },
    );
    graph.addEdge(index === 0 ? START : nodeName(index - 1), nodeName(index));
  }
  graph.addEdge(nodeName(MODEL_GRAPH_NODES - 1), END);
  return graph.compile({ checkpointer: SqliteSaver.fromConnString(dbPath) });
}

const app = buildGraph();
const tag = randomBytes(3).toString('hex');
let measurement = 0;

async function measure(
  inFlight: number,
  runs: number,
): Promise<{ elapsedMs: number; timings: StepTiming[][]; checkpointsPerRun: number }> {
  measurement += 1;
  const threads: string[] = [];
  const loop = closedLoop(inFlight, runs, async (index) => {
    const threadId = `${tag}-m${measurement}-${index}`;
    threads.push(threadId);
    const final = (await app.invoke({}, { configurable: { thread_id: threadId }, durability })) as typeof State.State;
    if (final.answers.length !== MODEL_GRAPH_NODES)
      throw new Error(`BENCH_LANGGRAPH_RUN: thread ${threadId} ended with ${final.answers.length} answers`);
    loop.finished();
  });
  const elapsedMs = await loop.done;
  const db = new Database(dbPath, { readonly: true });
  const { count } = db.prepare('SELECT COUNT(*) AS count FROM checkpoints WHERE thread_id = ?').get(threads[0]) as {
    count: number;
  };
  db.close();
  const measured = threads.map((thread) => timings.get(thread) ?? []);
  for (const thread of threads) timings.delete(thread);
  return { elapsedMs, timings: measured, checkpointsPerRun: count };
}

process.on('message', (message: { type: string; inFlight?: number; runs?: number }) => {
  if (message.type === 'measure') {
    measure(message.inFlight!, message.runs!).then(
      (result) => process.send?.({ type: 'measured', ...result }),
      (error: unknown) =>
        process.send?.({ type: 'measured', error: error instanceof Error ? error.message : String(error) }),
    );
  }
  if (message.type === 'stop') process.exit(0);
});
process.send?.({ type: 'ready' });
