/**
 * Restate in the peers bench: this process is the service endpoint (the Restate TypeScript SDK over
 * HTTP/2 on BENCH_PEER_PORT), registered with the restate-server the parent started. A run is one
 * invocation of `BenchPeer/run`, whose STEPS steps are each a `ctx.run` (journaled by the server
 * before the handler goes on). Runs are started through the server's ingress (RESTATE_INGRESS_URL):
 * awaited for `measure`, with `/send` and the run id as idempotency key for `submit`.
 */
import type { StepTiming } from '../../lib/step-timings.js';
import { peerRequire } from '../scratch.js';
import { stepBody } from '../peer-step-body.js';
import { STEPS, type StepKind } from '../peer-steps.js';
import { reportFinished, servePeer } from './serve-peer.js';

interface RestateContext {
  run<T>(name: string, action: () => Promise<T>): Promise<T>;
}
interface RestateSdk {
  service(definition: {
    name: string;
    handlers: Record<string, (ctx: RestateContext, input: { runId: string; kind: StepKind }) => Promise<unknown>>;
  }): unknown;
  serve(options: { services: unknown[]; port: number }): Promise<number>;
}

// The SDK calls Promise.withResolvers, which Node 22 has and Node 20 (this repository's floor) lacks.
const promises = Promise as unknown as { withResolvers?: () => object };
promises.withResolvers ??= () => {
  let resolve: unknown;
  let reject: unknown;
  const promise = new Promise((yes, no) => {
    resolve = yes;
    reject = no;
  });
  return { promise, resolve, reject };
};
const restate = peerRequire<RestateSdk>('@restatedev/restate-sdk');
const ingress = process.env.RESTATE_INGRESS_URL!;
const timings = new Map<string, StepTiming[]>();
const body = stepBody(timings);

const benchPeer = restate.service({
  name: 'BenchPeer',
  handlers: {
    async run(ctx, { runId, kind }) {
      for (let index = 0; index < STEPS; index += 1) await ctx.run(`s${index}`, () => body(runId, index, kind));
      reportFinished(runId);
      return 'done';
    },
  },
});
await restate.serve({ services: [benchPeer], port: Number(process.env.BENCH_PEER_PORT) });

async function call(path: string, runId: string, kind: StepKind, headers: Record<string, string> = {}) {
  const response = await fetch(`${ingress}/BenchPeer/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ runId, kind }),
  }).catch((error: unknown) => {
    throw new Error(`RESTATE_INGRESS: ${String((error as { cause?: unknown }).cause ?? error)}`);
  });
  if (!response.ok) throw new Error(`RESTATE_INGRESS: ${response.status} ${await response.text()}`);
  await response.arrayBuffer();
}

servePeer(
  {
    runOne: (runId, kind) => call('run', runId, kind),
    submit: (runId, kind) => call('run/send', runId, kind, { 'idempotency-key': runId }),
    close: async () => undefined,
  },
  timings,
);
