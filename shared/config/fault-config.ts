import { z } from 'zod';

/**
 * Issue 34 (faults that still cost money or time): the settings that bound what a fault may cost. Kept
 * in one block of their own, merged into the configuration by `loadConfig` (shared/config/config.ts), so
 * they can move into the "declared once" settings table as they are. Each line: the variable, its
 * default and bounds, what it means.
 */
const int = (fallback: number, min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

export const faultEnvShape = {
  /** Raw intake jobs whose data is larger are failed unread, their input not stored (1 KiB-1 GiB). */
  AGENTQ_MAX_JOB_BYTES: int(1024 * 1024, 1024, 1024 * 1024 * 1024),
  /** A repeated warning is logged once per kind per this interval, with how often it happened (0: every time). */
  AGENTQ_WARN_INTERVAL_MS: int(10_000, 0),
  /** After the shutdown grace, how long a stopping process tries to release what it holds before it exits anyway. */
  AGENTQ_SHUTDOWN_RELEASE_MS: int(5000, 0, 60_000),
  /** A step that met a Redis fault (OOM, READONLY, LOADING, MASTERDOWN, connection lost) is retried after this, no attempt spent. */
  AGENTQ_REDIS_FAULT_DELAY_MS: int(1000, 50, 60_000),
  /**
   * How long after its owner's liveness key lapsed (AGENTQ_LIVENESS_TTL_MS) a paid claim is taken over: the
   * trade between recovery time and paying twice for a call a paused (not dead) owner may still finish.
   */
  AGENTQ_PAID_CLAIM_TAKEOVER_MS: int(0, 0, 3_600_000),
};

/** The environment variables of this block (for the README's configuration table and its test). */
export const FAULT_ENV_NAMES = Object.keys(faultEnvShape) as (keyof typeof faultEnvShape)[];

export interface FaultConfig {
  /** AGENTQ_MAX_JOB_BYTES. @default 1 MiB */
  maxJobBytes: number;
  /** AGENTQ_WARN_INTERVAL_MS. @default 10000 */
  warnIntervalMs: number;
  /** AGENTQ_SHUTDOWN_RELEASE_MS. @default 5000 */
  shutdownReleaseMs: number;
  /** AGENTQ_REDIS_FAULT_DELAY_MS. @default 1000 */
  redisFaultDelayMs: number;
  /** AGENTQ_PAID_CLAIM_TAKEOVER_MS. @default 0 */
  paidClaimTakeoverMs: number;
}

type FaultEnv = { [Name in keyof typeof faultEnvShape]: number };

export function faultConfigOf(env: FaultEnv): FaultConfig {
  return {
    maxJobBytes: env.AGENTQ_MAX_JOB_BYTES,
    warnIntervalMs: env.AGENTQ_WARN_INTERVAL_MS,
    shutdownReleaseMs: env.AGENTQ_SHUTDOWN_RELEASE_MS,
    redisFaultDelayMs: env.AGENTQ_REDIS_FAULT_DELAY_MS,
    paidClaimTakeoverMs: env.AGENTQ_PAID_CLAIM_TAKEOVER_MS,
  };
}
