// A service that defines its own graph and runs agentq inside its own process.
import { randomUUID } from 'node:crypto';
import { AgentClient, END, START, channel, defineGraph } from 'agentq';
import { startWorker } from 'agentq/worker';
import { z } from 'zod';

// 1. A graph: fetch an order, then decide; each node runs as its own durable, retried step.
const refundGraph = defineGraph({
  name: 'refund-check',
  version: '1',
  input: z.object({ orderId: z.string(), amount: z.number().positive() }),
  state: {
    orderId: channel.replace(''),
    amount: channel.replace(0),
    notes: channel.append<string>(),
    decision: channel.replace(''),
  },
  initialState: (input) => input,
  output: (state) => ({ orderId: state.orderId, decision: state.decision, notes: state.notes }),
})
  .node('lookup', async (state) => ({ notes: `looked up ${state.orderId}` }), { retry: { maxAttempts: 5 } })
  .node('decide', (state) => ({ decision: state.amount <= 100 ? 'auto-approve' : 'needs-review' }))
  .edge(START, 'lookup')
  .edge('lookup', 'decide')
  .edge('decide', END)
  .build();

// 2. A worker that runs it (beside the built-in graphs); REDIS_URL comes from the environment.
const worker = await startWorker({ graphs: [refundGraph] });

// 3. A producer: enqueue a run and wait for its result. An idempotency key names one request: sent again
//    (a retry after a timeout) it returns the same run, so make it per request, not per order.
const client = new AgentClient();
const requestId = randomUUID();
const run = await client.enqueue({
  graph: 'refund-check',
  input: { orderId: 'A-1001', amount: 42 },
  idempotencyKey: `refund-A-1001-${requestId}`,
});
const done = await client.wait(run.id);
console.log(JSON.stringify({ status: done.status, output: done.output }));

await client.close();
await worker.close();
