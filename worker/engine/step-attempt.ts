import type { Job } from 'bullmq';
import type { StepJobData } from '../../shared/contracts/job-schema.js';
import type { Message, StepUsage } from '../../shared/contracts/run-record.js';
import type { Channels, StateOf } from '../../shared/graph/channels.js';
import type { Graph } from '../../shared/graph/graph.js';
import type { StepObservation } from '../../shared/graph/step-observer.js';
import type { CommitRequest, StateText, StepMeta } from '../../shared/store/redis-run-store.js';
import type { Logger } from '../../shared/telemetry/logger.js';
import type { StepDelivery, StepResult } from './step-worker.js';

/** How the step's job is finished when its step commits: by the transition script, with what this worker wants next. */
export interface StepJob {
  job: Job<StepJobData>;
  token: string | undefined;
  delivery: StepDelivery;
  fetchNext: () => boolean;
}

/** One attempt of one step: its job, the node the run's cursor names, the run as BEGIN read it. */
export interface StepAttempt {
  at: StepJob;
  nodeName: string;
  meta: StepMeta;
  stored: StateText;
  memos: Record<string, unknown>;
  /** 1 = the first. */
  attempt: number;
  /** Receives the transition that finished the job, when the step's commit did. */
  finished: (result: NonNullable<StepResult['transition']>) => void;
  /** The run's history length when the begin knew it (a start job's admission). */
  historyLength?: number;
}

/** What the node of an attempt returned, ready to commit. */
export interface ExecutedStep {
  graph: Graph;
  /** The state the node saw. */
  state: StateOf<Channels>;
  update: Record<string, unknown>;
  messages: Message[];
  /** The node's result as it returned it (for onNodeEnd). */
  output: object;
  ended: StepObservation | undefined;
  logger: Logger;
  step: CommitRequest['step'];
  stepUsage: StepUsage | undefined;
  hadMemos: boolean;
}
