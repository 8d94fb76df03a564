import { randomInt } from 'node:crypto';

/**
 * The fault and abuse suites run twice over: small inside `npm test` (the fast subset) and at the
 * their full size under `npm run test:chaos` / `npm run test:security`, which set AGENTQ_SUITE_SCALE=full.
 */
export const fullScale = process.env.AGENTQ_SUITE_SCALE === 'full';

/** `fast` inside `npm test`, `full` in the suites. */
export function atScale<T>(fast: T, full: T): T {
  return fullScale ? full : fast;
}

/**
 * The seed of a randomised test: AGENTQ_SEED when set (to replay a failure), otherwise a fresh one.
 * Tests print it (and record it as a figure) so any run can be replayed.
 */
export function suiteSeed(): number {
  const fixed = process.env.AGENTQ_SEED;
  return fixed !== undefined && fixed !== '' ? Number(fixed) : randomInt(1, 2 ** 31 - 1);
}
