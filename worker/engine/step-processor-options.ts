import type { Job } from 'bullmq';
import type { StepJobData } from '../../shared/contracts/job-schema.js';
import type { GraphRegistry } from '../../shared/graph/graph-registry.js';
import type { Services } from '../../shared/graph/node-context.js';
import type { StepObserver } from '../../shared/graph/step-observer.js';
import type { RedisRunStore, RunMeta } from '../../shared/store/redis-run-store.js';
import type { Logger } from '../../shared/telemetry/logger.js';
import type { Telemetry } from '../../shared/telemetry/telemetry.js';
import type { WarningGate } from '../../shared/telemetry/warning-gate.js';
import type { ActiveSteps } from './active-steps.js';
import type { StartAdmission } from './intake-processor.js';
import type { PaidClaims } from './paid-claims.js';
import type { CallbackSigning } from './waits/node-waits.js';
import type { StateCache } from './state-cache.js';
import type { EagerStarts } from './eager-starts.js';
import type { StepTransitions } from './step-transitions.js';

export interface StepProcessorOptions {
  /** Claims on paid work: a duplicate delivery waits for the call in flight instead of paying again. */
  claims?: PaidClaims;
  /** A claim's longest hold when the node has no timeout (AGENTQ_PAID_CLAIM_MS). */
  paidClaimMs?: number;
  /** What `context.callback` signs its URLs with (AGENTQ_CALLBACK_SECRET, AGENTQ_PUBLIC_URL). @default none */
  callbacks?: CallbackSigning;
  store: RedisRunStore;
  registry: GraphRegistry;
  transitions: StepTransitions;
  stateCache: StateCache;
  /** Eager hops in a row a run may take on this worker before its next job goes through the queue (AGENTQ_EAGER_HOPS). */
  eagerHops: number;
  /** A batch run's last step offers its slot to the batch's next question. @default none: its start job is queued */
  eagerStarts?: EagerStarts;
  activeSteps: ActiveSteps;
  services: Services;
  logger: Logger;
  telemetry: Telemetry;
  observers?: StepObserver[];
  /**
   * A step that met a Redis fault is retried after this, no attempt spent (AGENTQ_REDIS_FAULT_DELAY_MS). @default 1000
   */
  redisFaultDelayMs?: number;
  /** Repeated warnings, one line per kind per interval. */
  warnings?: WarningGate;
  /** Takes a run in from its start job (IntakeProcessor.admitStart); → superstep 0's tasks (and its task begun), or null. */
  admitStart: (meta: RunMeta, job: Job<StepJobData>, token?: string) => Promise<StartAdmission | null>;
}

/** How a step job ended, as the step processor reports it (and returns as the job's value). */
export type StepOutcome =
  'missing' | 'skip' | 'stale' | 'written' | 'cancelled' | 'committed' | 'fenced' | 'failed' | 'waiting';
