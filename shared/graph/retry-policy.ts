import type { AgentqError } from '../contracts/errors.js';

/** How a node's failed attempts are retried (through BullMQ's attempts and backoff). */
export interface RetryPolicy {
  /** Attempts in all, the first included. @default 3 */
  maxAttempts: number;
  /** Delay before the second attempt. @default 500 */
  initialDelayMs: number;
  /** Each further delay is multiplied by this. @default 2 */
  backoffFactor: number;
  /** No delay exceeds this. @default 30000 */
  maxDelayMs: number;
  /** Randomise each delay within [50%, 100%] of its value, so retries of many runs spread out. @default true */
  jitter: boolean;
  /** Which errors are worth another attempt. @default the error's own `retryable` flag */
  retryOn: (error: AgentqError) => boolean;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 3,
  initialDelayMs: 500,
  backoffFactor: 2,
  maxDelayMs: 30_000,
  jitter: true,
  retryOn: (error) => error.retryable,
};

export function resolveRetryPolicy(overrides: Partial<RetryPolicy> = {}): RetryPolicy {
  const policy = { ...DEFAULT_RETRY_POLICY, ...overrides };
  if (!Number.isInteger(policy.maxAttempts) || policy.maxAttempts < 1) {
    throw new RangeError(`retry.maxAttempts must be an integer ≥ 1, got ${String(policy.maxAttempts)}`);
  }
  return policy;
}

/** The delay after failed attempt `attempt` (1-based) before the next one. */
export function backoffDelay(policy: RetryPolicy, attempt: number, random: () => number = Math.random): number {
  const base = Math.min(policy.maxDelayMs, policy.initialDelayMs * policy.backoffFactor ** Math.max(0, attempt - 1));
  return Math.round(policy.jitter ? base * (0.5 + random() * 0.5) : base);
}
