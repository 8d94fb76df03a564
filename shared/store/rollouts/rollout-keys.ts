import type { Keys } from '../keys.js';

/**
 * The key of graph rollouts, beside `Keys` (which has no room left): a hash, one field per graph name, its
 * value the rollout's JSON `{current?, ramp?, percent?, at}`. Global, not per tenant: which version new runs
 * of a graph get is the deployment's decision, as which versions its workers serve is.
 */
export function graphRolloutsKey(keys: Pick<Keys, 'prefix'>): string {
  return `${keys.prefix}:graphs:rollout`;
}
