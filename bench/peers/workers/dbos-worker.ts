/**
 * DBOS Transact in the peers bench: a workflow of STEPS `DBOS.runStep`s (each step's result is
 * checkpointed in the system database, the private PostgreSQL at DBOS_SYSTEM_DATABASE_URL, before the
 * workflow goes on). A run is one workflow with the run id as its workflow id. On launch DBOS recovers
 * the workflows a killed process left pending, which is what the crash workload measures.
 */
import type { StepTiming } from '../../lib/step-timings.js';
import { peerRequire } from '../scratch.js';
import { stepBody } from '../peer-step-body.js';
import { STEPS, type StepKind } from '../peer-steps.js';
import { reportFinished, servePeer } from './serve-peer.js';

interface Handle {
  getResult(): Promise<unknown>;
}
interface Dbos {
  setConfig(config: { name: string; systemDatabaseUrl: string; logLevel?: string; runAdminServer?: boolean }): void;
  launch(): Promise<void>;
  shutdown(): Promise<void>;
  registerWorkflow<A extends unknown[], R>(
    fn: (...args: A) => Promise<R>,
    config: { name: string },
  ): (...args: A) => Promise<R>;
  runStep<R>(fn: () => Promise<R>, config: { name: string }): Promise<R>;
  startWorkflow<A extends unknown[], R>(
    fn: (...args: A) => Promise<R>,
    params: { workflowID: string },
  ): (...args: A) => Promise<Handle>;
}

const { DBOS } = peerRequire<{ DBOS: Dbos }>('@dbos-inc/dbos-sdk');
const timings = new Map<string, StepTiming[]>();
const body = stepBody(timings);

const workflow = DBOS.registerWorkflow(
  async (runId: string, kind: StepKind) => {
    for (let index = 0; index < STEPS; index += 1)
      await DBOS.runStep(() => body(runId, index, kind), { name: `s${index}` });
    reportFinished(runId);
    return 'done';
  },
  { name: 'benchPeer' },
);
DBOS.setConfig({
  name: 'agentq-bench-peers',
  systemDatabaseUrl: process.env.DBOS_SYSTEM_DATABASE_URL!,
  logLevel: 'error',
  runAdminServer: false,
});
await DBOS.launch();

servePeer(
  {
    async runOne(runId, kind) {
      await (await DBOS.startWorkflow(workflow, { workflowID: runId })(runId, kind)).getResult();
    },
    async submit(runId, kind) {
      await DBOS.startWorkflow(workflow, { workflowID: runId })(runId, kind);
    },
    close: () => DBOS.shutdown(),
  },
  timings,
);
