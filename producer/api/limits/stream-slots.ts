import { ApiError } from '../errors.js';

/**
 * Event streams (SSE) open on this API process, in all and per tenant. Each open stream costs a socket and
 * a follower of the RunEventHub (no Redis connection of its own): these limits keep one tenant, or a
 * crowd of idle clients, from holding all of a process's file descriptors. Per process: behind a load
 * balancer each instance counts its own.
 */
export class StreamSlots {
  private total = 0;
  private readonly byTenant = new Map<string, number>();

  /** `max`: AGENTQ_SSE_MAX_STREAMS; `tenantMax`: AGENTQ_SSE_TENANT_MAX_STREAMS; 0 = no limit. */
  constructor(
    readonly max: number,
    readonly tenantMax: number,
  ) {}

  /**
   * A slot for one stream of `tenant`; → the function that gives it back (once, whatever calls it).
   * Throws a 429 naming the limit reached when there is none.
   */
  take(tenant: string): () => void {
    const tenantOpen = this.byTenant.get(tenant) ?? 0;
    if (this.tenantMax > 0 && tenantOpen >= this.tenantMax)
      throw full(
        `tenant ${tenant} has ${tenantOpen} event streams open on this API process, its limit (AGENTQ_SSE_TENANT_MAX_STREAMS=${this.tenantMax}); close streams it no longer reads, or poll GET /v1/runs/:id`,
      );
    if (this.max > 0 && this.total >= this.max)
      throw full(
        `this API process serves ${this.total} event streams, its limit (AGENTQ_SSE_MAX_STREAMS=${this.max}); retry shortly, or poll GET /v1/runs/:id`,
      );
    this.total += 1;
    this.byTenant.set(tenant, tenantOpen + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.total -= 1;
      const left = (this.byTenant.get(tenant) ?? 1) - 1;
      if (left > 0) this.byTenant.set(tenant, left);
      else this.byTenant.delete(tenant);
    };
  }

  /** Streams open now, in all or of one tenant. */
  open(tenant?: string): number {
    return tenant === undefined ? this.total : (this.byTenant.get(tenant) ?? 0);
  }
}

function full(message: string): ApiError {
  return new ApiError(429, 'RATE_LIMITED', message, { headers: { 'retry-after': '5' } });
}
