import { cpus, loadavg } from 'node:os';

/**
 * Time bounds that stretch with the machine's load. A bound written for a quiet machine (a process
 * becoming ready, a test's time limit) is multiplied by the 1-minute load average per core when that is
 * above 1: on two cores at load 13 a 30 s readiness bound becomes 195 s. On a quiet machine nothing
 * changes, so a real hang still fails at the quiet bound there. Two settings override the estimate:
 * AGENTQ_TEST_LOAD_SCALE (a fixed factor for every bound) and AGENTQ_TEST_READY_MS (the readiness bound
 * of every spawned process, in ms).
 */
export function loadScale(): number {
  const fixed = Number(process.env.AGENTQ_TEST_LOAD_SCALE);
  if (Number.isFinite(fixed) && fixed > 0) return fixed;
  return Math.max(1, loadavg()[0]! / cpus().length);
}

/** `baseMs`, a bound right for a quiet machine, stretched by the current load. */
export function loadScaledMs(baseMs: number): number {
  return Math.round(baseMs * loadScale());
}

/** How long to wait for a spawned process's readiness signal: AGENTQ_TEST_READY_MS, or `baseMs` scaled. */
export function readinessBoundMs(baseMs = 30_000): number {
  const fixed = Number(process.env.AGENTQ_TEST_READY_MS);
  return Number.isFinite(fixed) && fixed > 0 ? fixed : loadScaledMs(baseMs);
}

/** How a bound was reached, for failure messages: the load it was scaled by, or the override. */
export function describeBound(baseMs: number): string {
  if (Number(process.env.AGENTQ_TEST_READY_MS) > 0) return 'AGENTQ_TEST_READY_MS';
  const [oneMinute] = loadavg();
  return `${baseMs} ms × ${loadScale().toFixed(2)} (load ${oneMinute!.toFixed(2)} on ${cpus().length} cores; AGENTQ_TEST_READY_MS overrides)`;
}

/** vitest's own limits before scaling: a test and a hook; the full-size suites run longer. */
export function suiteTimeouts(full: boolean): { testTimeout: number; hookTimeout: number } {
  return full ? { testTimeout: 20 * 60_000, hookTimeout: 5 * 60_000 } : { testTimeout: 60_000, hookTimeout: 60_000 };
}
