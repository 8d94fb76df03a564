import type { TenantBudget } from '../../shared/operations/limits/tenant-budget.js';
import type { GraphRollout, GraphRollouts, RolloutChange } from '../../shared/store/rollouts/graph-rollouts.js';
import type { BudgetsApi } from './client-apis.js';

export type { GraphRollout, RolloutChange };

/**
 * Graph rollouts (the deployment's, not a tenant's): per graph name, the version new runs get and a
 * ramping version for a share of them. ROLLOUT_VERSION_UNSERVED when a version named is served by no live
 * worker; CONFLICT when the change needs a ramp (promote, pause, a percent) or a current version there is not.
 */
export interface RolloutsApi {
  list(): Promise<GraphRollout[]>;
  get(graph: string): Promise<GraphRollout>;
  set(graph: string, change: RolloutChange): Promise<GraphRollout>;
  promote(graph: string): Promise<GraphRollout>;
  pause(graph: string): Promise<GraphRollout>;
  /** Ends the ramp; with `current`, also moves the current version (back). */
  rollback(graph: string, options?: { current?: string }): Promise<GraphRollout>;
  /** Removes the graph's rollout (new runs name no version, as before one was set); → whether there was one. */
  clear(graph: string): Promise<boolean>;
}

/** `client.rollouts`, over the enqueuer's own rollouts (so a change here reaches this client's next enqueue at once). */
export function rolloutsApi(rollouts: GraphRollouts, ready: () => Promise<void>): RolloutsApi {
  const after =
    <Args extends unknown[], T>(action: (...args: Args) => Promise<T>) =>
    async (...args: Args): Promise<T> => {
      await ready();
      return action(...args);
    };
  return {
    list: after(async () => [...(await rollouts.all()).values()]),
    get: after((graph: string) => rollouts.get(graph)),
    set: after((graph: string, change: RolloutChange) => rollouts.set(graph, change)),
    promote: after((graph: string) => rollouts.promote(graph)),
    pause: after((graph: string) => rollouts.pause(graph)),
    rollback: after((graph: string, options: { current?: string } = {}) => rollouts.rollback(graph, options.current)),
    clear: after((graph: string) => rollouts.clear(graph)),
  };
}

/** `client.budgets`: a tenant's limits and spend, the client's tenant unless one is named. */
export function budgetsApi(budget: TenantBudget, ready: () => Promise<void>, defaultTenant: string): BudgetsApi {
  return {
    getLimits: async ({ tenant = defaultTenant } = {}) => {
      await ready();
      return { tenant, ...(await budget.getLimits(tenant)) };
    },
    setLimits: async (limits, { tenant = defaultTenant } = {}) => {
      await ready();
      return { tenant, limits: await budget.setLimits(tenant, limits) };
    },
    usage: async ({ tenant = defaultTenant, days } = {}) => {
      await ready();
      return { tenant, ...(await budget.usage(tenant, days === undefined ? {} : { days })) };
    },
  };
}
