/**
 * Weighted fairness between tenants: each tenant's share of the workers' time under contention, in
 * proportion to its weight. Read from `tenant:weight` entries; `*` names the weight of every tenant the
 * list leaves out (1 unless given). An empty list turns weighted fairness off.
 */
export interface TenantWeights {
  /** The weight of each tenant named. */
  readonly weights: ReadonlyMap<string, number>;
  /** The weight of a tenant not named. */
  readonly otherwise: number;
  /** Whether the list had an entry: weighted fairness is on. */
  readonly on: boolean;
}

/** The largest weight: a stride is the weight-1 stride divided by it, and must stay at least one unit. */
export const MAX_TENANT_WEIGHT = 1000;

/** → the weights of `acme:3,beta:1,*:2` (blanks ignored), or the first problem with it. */
export function parseTenantWeights(text: string): { weights: TenantWeights } | { problem: string } {
  const weights = new Map<string, number>();
  let otherwise = 1;
  let on = false;
  for (const entry of text.split(',').map((part) => part.trim())) {
    if (entry === '') continue;
    const at = entry.lastIndexOf(':');
    const tenant = entry.slice(0, at).trim();
    const weight = Number(entry.slice(at + 1));
    if (at <= 0 || tenant === '')
      return { problem: `"${entry}" is not tenant:weight (e.g. acme:3; * for every other tenant)` };
    if (!Number.isFinite(weight) || weight <= 0 || weight > MAX_TENANT_WEIGHT)
      return { problem: `the weight of ${tenant} must be a number above 0 and at most ${MAX_TENANT_WEIGHT}` };
    if (tenant === '*') otherwise = weight;
    else weights.set(tenant, weight);
    on = true;
  }
  return { weights: { weights, otherwise, on } };
}

/** Whether weighted fairness is on: the list names a weight (`*:1` alone turns it on with equal weights). */
export function weightedFairness(weights: TenantWeights | undefined): weights is TenantWeights {
  return weights?.on === true;
}

/** A tenant's weight (unknown tenants weigh the `*` entry's, 1 by default). */
export function weightOf(weights: TenantWeights, tenant: string): number {
  return weights.weights.get(tenant) ?? weights.otherwise;
}
