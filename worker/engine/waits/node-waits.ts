import { trace, type Attributes } from '@opentelemetry/api';
import { AgentqError } from '../../../shared/contracts/errors.js';
import type {
  CallbackOptions,
  CallbackOutcome,
  NodeCallback,
  WaitForOptions,
  WaitOutcome,
} from '../../../shared/contracts/wait-event.js';
import type { NodeContext } from '../../../shared/graph/node-context.js';
import { ParkSignal } from '../../../shared/graph/park-signal.js';
import { callbackEventName, signCallbackToken } from '../../../shared/store/events/callback-token.js';
import { RunWaits, waitIdOf, type WaitRecord } from '../../../shared/store/events/run-waits.js';
import type { RedisRunStore } from '../../../shared/store/redis-run-store.js';

/**
 * The longest a step waiting for an event stays parked before it looks again by itself. A delivery
 * promotes it at once; this only bounds a wake-up lost with the process that sent the event (it died
 * between recording the delivery and promoting the step).
 */
export const WAIT_RECHECK_MS = 15 * 60_000;

/** How long a callback URL works when the node does not say. */
export const CALLBACK_DEFAULT_MS = 24 * 3600_000;

/** What callback URLs are made of (AGENTQ_CALLBACK_SECRET, AGENTQ_PUBLIC_URL). */
export interface CallbackSigning {
  /** Unset: `context.callback` fails, naming the setting. */
  secret: string | undefined;
  /** The API's address as third parties reach it, without a trailing slash. */
  baseUrl: string;
}

/** The URL a third party calls with `token`: `<base>/v1/callbacks/<token>`. */
export function callbackUrlOf(signing: CallbackSigning, token: string): string {
  return `${signing.baseUrl}/v1/callbacks/${token}`;
}

/** Where the step is: what its waits are named by (`s3.t0:0`, `s3.t0:1`, … in the order the node calls them). */
export interface NodeWaitsInput {
  store: RedisRunStore;
  runId: string;
  tenant: string;
  stepId: string;
  /** @default none: `context.callback` fails, naming AGENTQ_CALLBACK_SECRET */
  callbacks?: CallbackSigning;
}

/**
 * `context.sleep` and `context.waitFor` of one attempt of one step. Each call is named by its rank in the
 * node, so the node, run again when it wakes, finds its earlier waits ended and goes on to the next; a
 * node must call them in the same order on every run (as it calls `interrupt`).
 */
export class NodeWaits {
  private rank = 0;
  private readonly waits: RunWaits;

  constructor(private readonly input: NodeWaitsInput) {
    this.waits = new RunWaits(input.store.redis, input.store.keys, input.store.retentionSeconds);
  }

  readonly sleep: NodeContext['sleep'] = async (duration) => {
    const { runId, stepId } = this.input;
    const waitId = waitIdOf(stepId, this.rank++);
    const proposed = typeof duration === 'number' ? Date.now() + duration : new Date(duration.until).getTime();
    if (!Number.isFinite(proposed) || (typeof duration === 'number' && duration < 0))
      throw new AgentqError(
        'INVALID_INPUT',
        'context.sleep takes milliseconds (0 or more) or { until: a Date or an ISO 8601 time }',
      );
    const until = await this.waits.fixUntil(runId, waitId, proposed);
    const left = until - Date.now();
    const at = new Date(until).toISOString();
    if (left <= 0) {
      waitEvent('agentq.wait.end', { 'agentq.wait.id': waitId, 'agentq.wait.kind': 'sleep', 'agentq.wait.until': at });
      return;
    }
    throw new ParkSignal(left, { sleep: { until: at } }, 'the step sleeps without holding a worker');
  };

  readonly waitFor = async <T>(name: string, options: WaitForOptions = {}): Promise<WaitOutcome<T>> => {
    const { runId, tenant, stepId } = this.input;
    const waitId = waitIdOf(stepId, this.rank++);
    const { match = {}, timeoutMs, key } = options;
    if (typeof name !== 'string' || name === '' || (timeoutMs !== undefined && !(timeoutMs >= 0)))
      throw new AgentqError('INVALID_INPUT', 'context.waitFor takes an event name and a timeoutMs of 0 or more');
    const until = timeoutMs === undefined ? null : await this.waits.fixUntil(runId, waitId, Date.now() + timeoutMs);
    const record: WaitRecord = { name, match, key: key ?? null, until };
    const outcome = await this.waits.watch(runId, waitId, record, tenant);
    if (outcome !== 'waiting') {
      waitEvent('agentq.wait.end', {
        'agentq.wait.id': waitId,
        'agentq.wait.kind': 'event',
        'agentq.wait.event': name,
        'agentq.wait.timed_out': 'timedOut' in outcome,
      });
      return outcome as WaitOutcome<T>;
    }
    const left = until === null ? WAIT_RECHECK_MS : Math.min(WAIT_RECHECK_MS, Math.max(0, until - Date.now()));
    const on = { name, key: key ?? null, match, until: until === null ? null : new Date(until).toISOString() };
    throw new ParkSignal(
      left,
      { event: on },
      'the step waits for an event without holding a worker',
      async () => (await this.waits.outcome(runId, waitId)) !== null,
    );
  };

  readonly callback = async <T>(options: CallbackOptions = {}): Promise<NodeCallback<T>> => {
    const { runId, tenant, stepId, callbacks } = this.input;
    const waitId = waitIdOf(stepId, this.rank++);
    const { timeoutMs = CALLBACK_DEFAULT_MS } = options;
    if (!(timeoutMs > 0)) throw new AgentqError('INVALID_INPUT', 'context.callback takes a timeoutMs above 0');
    if (!callbacks?.secret)
      throw new AgentqError(
        'INVALID_INPUT',
        'context.callback needs AGENTQ_CALLBACK_SECRET (the same value on workers and API) to sign its URL',
      );
    // Fixed at the first call, so the token, made of it, is the same on every run of the step.
    const until = await this.waits.fixUntil(runId, waitId, Date.now() + timeoutMs);
    const token = signCallbackToken({ tenant, runId, waitId, expiresAt: until }, callbacks.secret);
    const record: WaitRecord = { name: callbackEventName(token), match: {}, key: null, until };
    // Opened now, before the node hands the URL out: a POST that comes before `wait()` parks is taken.
    const opened = await this.waits.watch(runId, waitId, record, tenant);
    const expiresAt = new Date(until).toISOString();
    const wait = async (): Promise<CallbackOutcome<T>> => {
      const outcome = opened !== 'waiting' ? opened : await this.waits.watch(runId, waitId, record, tenant);
      if (outcome !== 'waiting') {
        waitEvent('agentq.wait.end', {
          'agentq.wait.id': waitId,
          'agentq.wait.kind': 'callback',
          'agentq.wait.timed_out': 'timedOut' in outcome,
        });
        return 'timedOut' in outcome ? outcome : { body: outcome.event.data as T };
      }
      throw new ParkSignal(
        Math.min(WAIT_RECHECK_MS, Math.max(0, until - Date.now())),
        { callback: { until: expiresAt } },
        'the step waits for a callback without holding a worker',
        async () => (await this.waits.outcome(runId, waitId)) !== null,
      );
    };
    return { url: callbackUrlOf(callbacks, token), token, expiresAt, wait };
  };
}

/** An event on the step's span (`agent.step <node>`): a wait ended, and how. */
function waitEvent(name: string, attributes: Attributes): void {
  trace.getActiveSpan()?.addEvent(name, attributes);
}
