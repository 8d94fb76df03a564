import type { Queue } from 'bullmq';
import type { RedisConnection } from '../../shared/redis/connect-redis.js';
import type { Config } from '../../shared/config/config.js';
import type { Logger } from '../../shared/telemetry/logger.js';
import type { RedisMetrics } from '../../shared/operations/metrics/redis-metrics.js';
import type { RedisRunStore } from '../../shared/store/redis-run-store.js';
import type { RunEventHub } from '../client/run-event-hub.js';
import type { TokenHub } from '../client/token-hub.js';
import type { AgentClient } from '../client/agent-client.js';
import type { ApiKeys } from './auth/api-keys.js';
import type { TenantPolicy } from '../../shared/config/tenant-policy.js';
import type { DashboardSessions } from './auth/dashboard-sessions.js';
import type { RateLimiter } from '../../shared/operations/limits/rate-limiter.js';
import type { TenantInflight } from '../../shared/operations/limits/tenant-inflight.js';
import type { AuthThrottle } from './limits/auth-throttle.js';
import type { StreamSlots } from './limits/stream-slots.js';

/** What the API's routes share: built once by createApi, handed to each route plugin. */
export interface ApiContext {
  config: Config;
  client: AgentClient;
  /** The client's run store (reads by id are checked against the caller's tenant by the routes). */
  store: RedisRunStore;
  /** The client's producer connection: fails fast (no offline queue, command timeout). */
  redis: RedisConnection;
  apiKeys: ApiKeys;
  /** What each tenant's (and key's) runs may ask for (AGENTQ_TENANT_POLICY_FILE): checked before a run is created. */
  policy: TenantPolicy;
  sessions: DashboardSessions;
  rateLimiter: RateLimiter;
  /** Failed authentications per client address (AGENTQ_AUTH_FAILURES_PER_MINUTE). */
  authThrottle: AuthThrottle;
  inflight: TenantInflight;
  metrics: RedisMetrics;
  /** Every agentq queue (Bull Board, queue depth in /metrics). */
  queues: Queue[];
  logger: Logger;
  /** Live model tokens of runs (pub/sub, one connection for every event stream of this API). */
  tokens: TokenHub;
  /** Committed run events for every event stream of this API: one blocking Redis connection per slot group. */
  events: RunEventHub;
  /** Event streams open on this process, in all and per tenant (AGENTQ_SSE_MAX_STREAMS, AGENTQ_SSE_TENANT_MAX_STREAMS). */
  streams: StreamSlots;
  /** Aborted when the app starts closing: long-lived answers (event streams) end so close() does not wait on them. */
  closing: AbortSignal;
}
