import { Queue } from 'bullmq';
import { setMaxListeners } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type RawServerDefault } from 'fastify';
import {
  serializerCompiler,
  validatorCompiler,
  type FastifyPluginAsyncZod,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import { loadConfig, type Config } from '../../shared/config/config.js';
import { createLogger, type Logger } from '../../shared/telemetry/logger.js';
import { RedisMetrics } from '../../shared/operations/metrics/redis-metrics.js';
import { AgentClient } from '../client/agent-client.js';
import { agentqQueueNames } from './agentq-queue-names.js';
import { queueStreamOptions, STEP_QUEUE } from '../../shared/contracts/queues.js';
import { allShards, stepQueuePrefix } from '../../shared/contracts/shards.js';
import type { ApiContext } from './api-context.js';
import { ApiKeys } from './auth/api-keys.js';
import { TenantPolicy } from '../../shared/config/tenant-policy.js';
import { requireRole } from './auth/authenticate.js';
import { DashboardSessions } from './auth/dashboard-sessions.js';
import { ApiError, notFound, sendApiError } from './errors.js';
import { registerApiDocs } from './register-api-docs.js';
import { AuthThrottle } from './limits/auth-throttle.js';
import { limitJsonDepth } from './limits/limit-json-depth.js';
import { limitRate } from './limits/limit-rate.js';
import { RateLimiter } from '../../shared/operations/limits/rate-limiter.js';
import { TenantInflight } from '../../shared/operations/limits/tenant-inflight.js';
import { dashboardRoutes } from './routes/dashboard-routes.js';
import { inspectorRoutes } from './routes/inspector-routes.js';
import { signInRoutes } from './routes/sign-in-routes.js';
import { registerSecurityHeaders } from './security-headers.js';
import { healthRoutes } from './routes/health-routes.js';
import { metricsRoute } from './routes/metrics-route.js';
import { runsRoutes } from './routes/runs-routes.js';
import { timeTravelRoutes } from './routes/time-travel-routes.js';
import { answerCacheRoutes } from './routes/answer-cache-routes.js';
import { batchesRoutes } from './routes/batches-routes.js';
import { documentsRoutes } from './routes/documents-routes.js';
import { searchRoutes } from './routes/search-routes.js';
import { chatRoutes } from './routes/chat-routes.js';
import { schedulesRoutes } from './routes/schedules-routes.js';
import { eventsRoutes } from './routes/events-routes.js';
import { callbackRoutes } from './routes/callback-routes.js';
import { budgetRoutes } from './routes/budget-routes.js';
import { rolloutRoutes } from './routes/rollout-routes.js';
import { conversationsRoutes } from './routes/conversations-routes.js';
import { TokenHub } from '../client/token-hub.js';
import { RunEventHub } from '../client/run-event-hub.js';
import { StreamSlots } from './limits/stream-slots.js';
import { connectRedis } from '../../shared/redis/connect-redis.js';
import { checkRedisCluster } from '../../shared/redis/check-redis-cluster.js';

/** The API's fastify instance (zod schemas as types). */
export type ApiInstance = FastifyInstance<
  RawServerDefault,
  IncomingMessage,
  ServerResponse,
  FastifyBaseLogger,
  ZodTypeProvider
>;

/** A capability's routes under /v1 (documents, batches, …): given the API's context, a plugin. */
export type ApiRoutes = (context: ApiContext) => FastifyPluginAsyncZod;

export interface CreateApiOptions {
  /** The live-token fan-out (tests read its listener count); its owner closes it. @default one of the API's own */
  tokens?: TokenHub;
  /** The multiplexed reader of run events (tests read its counts); its owner closes it. @default one of the API's own */
  events?: RunEventHub;
  /** @default loadConfig() (the environment) */
  config?: Config;
  /** @default a pino logger on stderr at config.logLevel */
  logger?: Logger;
  /** @default new AgentClient({ config }), closed with the app */
  client?: AgentClient;
  /** @default ApiKeys.fromConfig(config) (AGENTQ_API_KEYS, AGENTQ_API_KEYS_FILE) */
  apiKeys?: ApiKeys;
  /** What each tenant's runs may ask for. @default TenantPolicy.fromConfig(config) (AGENTQ_TENANT_POLICY_FILE; safe with keys) */
  policy?: TenantPolicy;
  /**
   * More routes under /v1, behind the same key check and rate limit. @default []
   */
  routes?: ApiRoutes[];
}

/**
 * The HTTP API (docs/reference/http-api.md) as a fastify instance, ready (`app.inject()` in tests; `startApi` listens).
 * Requests and answers are zod schemas, which also make the OpenAPI document at /docs/json. Every error
 * answers `{error: {code, message, details?}}`. Closing the app closes what it opened.
 */
export async function createApi(options: CreateApiOptions = {}): Promise<ApiInstance> {
  const config = options.config ?? loadConfig();
  // Seeds that are not one whole cluster are refused now, naming the fix, not at the first request.
  if (config.redisClusterNodes && !options.client) await checkRedisCluster(config.redisClusterNodes);
  const logger = options.logger ?? createLogger(config.logLevel, { role: 'api' });
  const apiKeys = options.apiKeys ?? ApiKeys.fromConfig(config);
  const client = options.client ?? new AgentClient({ config });
  const { store } = client;
  const redis = store.redis;
  // Bull Board and /metrics read the queues through the client's fail-fast connection.
  // The step queue is one queue per shard, each under its shard's prefix (shared/contracts/shards.ts).
  const queues = agentqQueueNames().flatMap((name) =>
    (name === STEP_QUEUE
      ? allShards(config.shards).map((shard) => stepQueuePrefix(config.queuePrefix, shard, config.shards))
      : [config.queuePrefix]
    ).map((prefix) => {
      const queue = new Queue(name, { connection: redis, prefix, ...queueStreamOptions(config.queueEventsMaxLen) });
      queue.on('error', () => undefined);
      return queue;
    }),
  );
  const closing = new AbortController();
  // Every open event stream listens for it: thousands are expected, not a leak.
  setMaxListeners(0, closing.signal);
  const tokens = options.tokens ?? new TokenHub(store.keys, () => connectRedis(config, 'subscriber'));
  const events = options.events ?? new RunEventHub(store, () => connectRedis(config, 'blocking'));
  const context: ApiContext = {
    config,
    client,
    store,
    redis,
    apiKeys,
    policy: options.policy ?? TenantPolicy.fromConfig(config, !apiKeys.isOpen),
    sessions: new DashboardSessions(redis, store.keys, config.dashboardSessionSeconds),
    rateLimiter: new RateLimiter(redis, store.keys, config.rateLimitPerMinute),
    authThrottle: new AuthThrottle(redis, store.keys, config.authFailuresPerMinute),
    inflight: new TenantInflight(redis, store.keys, config.tenantMaxInflight),
    metrics: new RedisMetrics(redis, config.keyPrefix, config.shards),
    queues,
    logger,
    closing: closing.signal,
    tokens,
    events,
    streams: new StreamSlots(config.sseMaxStreams, config.sseTenantMaxStreams),
  };

  // `true` believed every peer's X-Forwarded-For, so a client could claim any address (and guess keys from a
  // new one each time): it is read as one hop, the nearest proxy, which is what it meant behind one proxy.
  const trustProxy = config.trustProxy === true ? 1 : config.trustProxy;
  if (config.trustProxy === true)
    logger.warn(
      'AGENTQ_TRUST_PROXY=true is deprecated and read as 1 (believe the nearest proxy only); name your proxies (addresses/CIDRs) or their hop count',
    );
  const app = Fastify<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger>({
    loggerInstance: logger,
    bodyLimit: config.bodyLimitBytes,
    // Run ids are up to 128 characters (find-my-way's default stops at 100).
    routerOptions: { maxParamLength: 256 },
    return503OnClosing: true,
    // AGENTQ_TRUST_PROXY: whose X-Forwarded-For/-Proto/-Host make request.ip and request.protocol (Secure cookies).
    trustProxy: typeof trustProxy === 'number' ? (_address: string, hop: number) => hop < trustProxy : trustProxy,
    // Errors fastify raises before routing (a malformed URL) get the one error shape too.
    frameworkErrors: (error, _request, reply) => {
      sendApiError(
        reply,
        error.code === 'FST_ERR_BAD_URL'
          ? new ApiError(400, 'INVALID_INPUT', `the URL is malformed: ${error.message}; percent-encode the path`)
          : error,
      );
    },
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.decorateRequest('principal', null);
  app.decorateRequest('pageSession', null);
  // JSON only (the sign-in form adds urlencoded for itself): a text body gets 415, not a schema error.
  app.removeContentTypeParser('text/plain');
  app.setErrorHandler((error, _request, reply) => sendApiError(reply, error));
  // Before any route's schema: no JSON field nests deeper than a run's input may.
  app.addHook('preValidation', limitJsonDepth());
  app.setNotFoundHandler(notFound);
  // Event streams end first (clients reconnect with Last-Event-ID, to another instance if need be).
  app.addHook('preClose', async () => closing.abort());
  app.addHook('onClose', async () => {
    await Promise.all(queues.map((queue) => queue.close()));
    if (!options.tokens) tokens.close();
    if (!options.events) events.close();
    if (!options.client) await client.close();
  });

  registerSecurityHeaders(app);
  await registerApiDocs(app, context);

  await app.register(healthRoutes(context));
  await app.register(metricsRoute(context));
  await app.register(dashboardRoutes(context));
  await app.register(signInRoutes(context));
  await app.register(inspectorRoutes(context));
  // Outside the key check: a callback's signed token is its credential (its own rate limit, per address).
  await app.register(callbackRoutes(context));
  await app.register(async (v1) => {
    v1.addHook(
      'onRequest',
      requireRole({ apiKeys, defaultTenant: config.tenant, throttle: context.authThrottle }, 'producer'),
    );
    v1.addHook('onRequest', limitRate(context.rateLimiter, redis));
    await v1.register(runsRoutes(context));
    await v1.register(timeTravelRoutes(context));
    await v1.register(batchesRoutes(context));
    await v1.register(answerCacheRoutes(context));
    await v1.register(documentsRoutes(context));
    await v1.register(searchRoutes(context));
    await v1.register(chatRoutes(context));
    await v1.register(budgetRoutes(context));
    await v1.register(rolloutRoutes(context));
    await v1.register(schedulesRoutes(context));
    await v1.register(eventsRoutes(context));
    await v1.register(conversationsRoutes(context));
    for (const routes of options.routes ?? []) await v1.register(routes(context));
  });
  await app.ready();
  return app;
}
