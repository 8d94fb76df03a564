import { AgentqError } from '../../../shared/contracts/errors.js';
import type { PendingInterrupt } from '../../../shared/contracts/run-record.js';
import type { InterruptOptions } from '../../../shared/contracts/wait-event.js';
import { signCallbackToken } from '../../../shared/store/events/callback-token.js';
import { interruptWaitId, RunWaits } from '../../../shared/store/events/run-waits.js';
import type { RedisRunStore } from '../../../shared/store/redis-run-store.js';
import { CALLBACK_DEFAULT_MS, callbackUrlOf, type CallbackSigning } from './node-waits.js';

/**
 * The callback `interrupt(request, options)` asks for: how long its URL works, or undefined (none).
 * Checked when the node asks, so a missing secret fails the step that wants a URL, naming the setting.
 */
export function interruptCallbackOf(
  options: InterruptOptions | undefined,
  signing: CallbackSigning | undefined,
): { timeoutMs: number } | undefined {
  const asked = options?.callback;
  if (!asked) return undefined;
  const timeoutMs = asked === true ? CALLBACK_DEFAULT_MS : (asked.timeoutMs ?? CALLBACK_DEFAULT_MS);
  if (!(timeoutMs > 0)) throw new AgentqError('INVALID_INPUT', 'context.interrupt takes a callback timeoutMs above 0');
  if (!signing?.secret)
    throw new AgentqError(
      'INVALID_INPUT',
      'context.interrupt with a callback needs AGENTQ_CALLBACK_SECRET (the same value on workers and API) to sign its URL',
    );
  return { timeoutMs };
}

/** Where an interrupt with a callback was asked for, and the signing the worker has. */
export interface InterruptCallbackInput {
  store: RedisRunStore;
  runId: string;
  tenant: string;
  stepId: string;
  timeoutMs: number;
  signing: CallbackSigning & { secret: string };
}

/**
 * The interrupt's callback URL and expiry. The expiry is fixed the first time the step asks (in the run's
 * waits), and the token is signed from it, so a re-run of the interrupting step hands out the same URL.
 */
export async function interruptCallback(
  input: InterruptCallbackInput,
): Promise<Required<Pick<PendingInterrupt, 'callbackUrl' | 'callbackExpiresAt'>>> {
  const { store, runId, tenant, stepId, timeoutMs, signing } = input;
  const waits = new RunWaits(store.redis, store.keys, store.retentionSeconds);
  const waitId = interruptWaitId(stepId);
  const until = await waits.fixUntil(runId, waitId, Date.now() + timeoutMs);
  const token = signCallbackToken({ tenant, runId, waitId, expiresAt: until }, signing.secret);
  return { callbackUrl: callbackUrlOf(signing, token), callbackExpiresAt: new Date(until).toISOString() };
}
