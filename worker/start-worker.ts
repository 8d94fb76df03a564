import { loadConfig, type Config } from '../shared/config/config.js';
import { GraphRegistry } from '../shared/graph/graph-registry.js';
import { createLogger, type Logger } from '../shared/telemetry/logger.js';
import { Schedules } from '../shared/operations/schedules/schedules.js';
import { ScheduleTickProcessor } from './operations/schedule-tick-processor.js';
import { assertBullmqPinned } from '../shared/bullmq/bullmq-functions.js';
import { ActiveSteps } from './engine/active-steps.js';
import { builtInGraphs } from './agents/graphs/built-in-graphs.js';
import { IntakeProcessor } from './engine/intake-processor.js';
import { Reconciler } from './operations/reconciler.js';
import { StepJobs } from './engine/step-jobs.js';
import { autopilotSettingsOf } from '../shared/operations/batches/batch-autopilot.js';
import { BatchDispatcher } from '../shared/operations/batches/batch-dispatcher.js';
import { RunEnqueuer } from '../shared/operations/runs/run-enqueuer.js';
import { startWebhookWorker } from './operations/webhooks/start-webhook-worker.js';
import { startIngestWorker } from './ingest/start-ingest-worker.js';
import { startTelemetry } from '../shared/telemetry/telemetry.js';
import { connectMcpServers, type McpConnections } from '../shared/adapters/mcp/connect-mcp-servers.js';
import { ServedGraphs } from '../shared/store/served-graphs.js';
import { startServedGraphsHeartbeat } from './operations/served-graphs-heartbeat.js';
import { assertRedisReachable } from '../shared/redis/assert-redis-reachable.js';
import { checkRedisCluster } from '../shared/redis/check-redis-cluster.js';
import { connectRedis, type RedisConnection } from '../shared/redis/connect-redis.js';
import { WarningGate } from '../shared/telemetry/warning-gate.js';
import { startJobWorkers } from './start-job-workers.js';
import { stopWorker, type RunningWorkerParts } from './stop-worker.js';
import { openWorkerQueues } from './open-worker-queues.js';
import { connectRunStore, type FinishedHook } from './connect-run-store.js';
import type { RedisRunStore } from '../shared/store/redis-run-store.js';
import type { StepQueues } from '../shared/store/step-queues.js';
import { startWorkerLiveness, type WorkerLiveness } from './start-worker-liveness.js';
import { Keys } from '../shared/store/keys.js';
import { createStepProcessor } from './create-step-processor.js';
import { loadTokenizer } from '../shared/llm/estimate-tokens.js';
import { workerEagerStarts, type EagerStarts } from './engine/eager-starts.js';
import { FairQueue } from '../shared/store/fair-queue.js';
import { loadWhenIdle, type IdleLoad } from './runtime/load-when-idle.js';
import type { TurnGate } from './runtime/turn-gate.js';

import type { AgentWorker, StartWorkerOptions } from './agent-worker.js';
export type { AgentWorker, StartWorkerOptions };

/** How often a started worker looks whether it is idle, to load the tokenizer then (loadWhenIdle). */
const TOKENIZER_IDLE_POLL_MS = 250;

/**
 * Starts a worker process's share of agentq: the intake (raw and client jobs), the step processor and
 * the reconciler. A step job's lock lasts AGENTQ_TAKE_LOCK_MS (30 s) from when it is taken until the
 * liveness thread holds it, then AGENTQ_LOCK_DURATION_MS (3 s), renewed every beat by the thread: a
 * blocked event loop keeps its jobs. A dead process's locks are released by its peers' liveness threads
 * once its liveness key lapses (3 s), or at their next beat when it exited on their machine, and its
 * steps go back to wait in the same script (BullMQ's stalled check, run then).
 */
export async function startWorker(options: StartWorkerOptions = {}): Promise<AgentWorker> {
  const config = options.config ?? loadConfig();
  const logger = options.logger ?? createLogger(config.logLevel, { role: 'worker' });
  const registry = new GraphRegistry(options.builtInGraphs === false ? [] : builtInGraphs());
  for (const graph of options.graphs ?? []) registry.register(graph);
  // First: the liveness thread boots (an isolate of its own, its Redis client, its connection) on another
  // core while this one connects. Its first beat releases the jobs of a peer that died, so a worker
  // started after a crash gets them back sooner the sooner the thread is up.
  const liveness = startWorkerLiveness(config, new Keys(config.keyPrefix, config.shards), logger);
  let mcp: McpConnections;
  try {
    mcp = await connectMcpServers(options.mcpServers ?? config.mcpServers, {
      logger,
      connectTimeoutMs: config.mcpConnectTimeoutMs,
      callTimeoutMs: config.mcpCallTimeoutMs,
    });
  } catch (error) {
    // A bad MCP server fails the start with only the thread to stop.
    await liveness.close();
    throw error;
  }
  try {
    return await startConnected({ options, config, logger, registry, mcp, liveness });
  } catch (error) {
    // A start that fails after the MCP servers connected leaves no stdio process or HTTP session behind.
    await mcp.close();
    throw error;
  }
}

interface StartContext {
  options: StartWorkerOptions;
  config: Config;
  logger: Logger;
  registry: GraphRegistry;
  mcp: McpConnections;
  liveness: WorkerLiveness;
}

/**
 * The rest of the start, once the MCP servers are connected. A start that fails part-way (a thread's
 * module missing, a queue worker that cannot start) stops what it had opened before it rethrows: its
 * connections, liveness thread and queue workers would otherwise keep the process alive, saying nothing.
 */
async function startConnected(context: StartContext): Promise<AgentWorker> {
  const { config, logger, mcp, liveness } = context;
  const held: RunningWorkerParts = {
    // No step has run: nothing to give a grace period to.
    config: { shutdownGraceMs: 0, shutdownReleaseMs: config.shutdownReleaseMs },
    logger,
    // Repeated warnings (a Redis outage) as one line per kind per interval, with a count.
    warnings: new WarningGate(logger, config.warnIntervalMs),
    activeSteps: new ActiveSteps(),
    jobWorkers: [],
    queues: [],
    mcp,
    connections: [],
    liveness,
  };
  const collector: { stop(): Promise<void> }[] = [];
  try {
    // The step scripts run BullMQ's own scripts with the KEYS/ARGV layout of the pinned version.
    assertBullmqPinned();
    // A clear error instead of a silent wait when Redis is down, or a Cluster that is not whole.
    if (config.redisClusterNodes) await checkRedisCluster(config.redisClusterNodes);
    else await assertRedisReachable(config.redisUrl);
    return await startParts(context, held, collector);
  } catch (error) {
    for (const started of collector) await started.stop();
    await stopWorker(held);
    throw error;
  }
}

/** The worker's parts, started in order; each goes into `held` as it opens, for a failed start to stop. */
async function startParts(
  { options, config, logger, registry, mcp, liveness }: StartContext,
  held: RunningWorkerParts,
  collector: { stop(): Promise<void> }[],
): Promise<AgentWorker> {
  const { warnings, activeSteps } = held;
  const telemetry = options.telemetry ?? (await startTelemetry());
  held.telemetry = telemetry;
  const { redis, stepRedis, store, finishedHooks, runFinished } = await connectRunStore(
    options,
    config,
    logger,
    telemetry,
  );
  held.connections.push(redis, stepRedis);
  held.runFinished = runFinished;
  // No job is taken before the process beats: its claims on paid work would look dead to its peers. The
  // first beats are written from here until the thread's own, so the start does not wait for its boot.
  const beating = liveness.beatUntilThreadBeats(redis);
  // Awaited before the first take; a failure meanwhile is the start's, not an unhandled rejection.
  beating.catch(() => undefined);
  const { bullmq, connection, stepQueues, intakeQueue, schedulesQueue } = openWorkerQueues(
    config,
    telemetry,
    stepRedis,
    warnings,
  );
  held.bullmq = bullmq;
  held.queues.push(...stepQueues.all(), intakeQueue, schedulesQueue);
  const fair = new FairQueue(store.keys, config.tenantWeights);
  const stepJobs = new StepJobs(stepQueues, registry, { fair, redis: stepRedis });
  const served = new ServedGraphs({ redis, keys: store.keys, heartbeatMs: config.graphHeartbeatMs });
  const intakeProcessor = new IntakeProcessor({ store, registry, stepJobs, config, logger, telemetry, served });
  // A batch run's last step offers its slot; the batch hook starts the next question's run in it.
  const eagerStarts = workerEagerStarts({ config, stepQueues, activeSteps, redis, keys: store.keys });
  const batches = dispatchBatches(finishedHooks, { redis, store, stepQueues, config, eagerStarts });
  await activeSteps.listen(connectRedis(config, 'blocking'), store.keys.cancelChannel(), logger);

  // Liveness from a thread of its own (started first, in startWorker), and claims on paid work that respect it.
  liveness.watch([redis, stepRedis]);
  const { stepProcessor, transitions, startsGate, providerBatches, countsTokens } = await createStepProcessor({
    options,
    config,
    logger,
    telemetry,
    warnings,
    registry,
    mcp,
    redis,
    stepRedis,
    store,
    stepQueues,
    liveness,
    stepJobs,
    activeSteps,
    intakeProcessor,
    eagerStarts,
  });
  const concurrency = options.concurrency ?? config.concurrency;
  await beating;
  const jobs = startJobWorkers({
    config,
    registry,
    connection,
    stepQueues,
    stepProcessor,
    transitions,
    intakeProcessor,
    tickProcess: new ScheduleTickProcessor({
      schedules: new Schedules({ redis, keys: store.keys, queue: schedulesQueue }),
      enqueuer: new RunEnqueuer(store, stepQueues, config, intakeProcessor.admitInline),
      logger,
    }).process,
    liveness,
    startsGate,
    telemetry,
    concurrency,
    warnings,
    logger,
  });
  held.jobWorkers.push(...jobs.all);
  const tokenizerLoad = countsTokens ? tokenizerWhenIdle({ activeSteps, startsGate }, logger) : undefined;
  collector.push({ stop: async () => tokenizerLoad?.stop() });
  const reconciler = new Reconciler({
    store,
    stepJobs,
    intakeQueue,
    batches,
    logger,
    intervalMs: config.reconcileIntervalMs,
    staleAfterMs: config.reconcileAfterMs,
    reindexKeys: config.reconcileReindexKeys,
  });
  if (options.reconciler !== false) reconciler.start();
  held.reconciler = reconciler;
  if (providerBatches) {
    // A batch's warm-up question answered its first call: the others go now, while the prefix is cached.
    providerBatches.router.onWarm(async (batchId) => void (await batches.topUp(batchId)));
    providerBatches.collector.start();
    collector.push(providerBatches.collector);
  }
  await Promise.all([
    ...jobs.stepWorkers.map((worker) => worker.waitUntilReady()),
    jobs.intakeWorker.waitUntilReady(),
    jobs.scheduleWorker.waitUntilReady(),
  ]);
  // Webhooks; document ingestion (its own queue and BullMQ Worker, parsing in worker threads: worker/ingest);
  // the served-graphs entry. Started at once, not one after the other: each waits on Redis round trips
  // (connections, BullMQ's script loads) while the first steps already run.
  const [webhookWorker, ingestWorker, heartbeat] = await Promise.allSettled([
    startWebhookWorker({ config, store, logger, processId: liveness.processId }),
    startIngestWorker({ config, logger, processId: liveness.processId }),
    startServedGraphsHeartbeat({ served, registry, intervalMs: config.graphHeartbeatMs, logger }),
  ]);
  // Those that started go into `held` before a failure is thrown, for the failed start to stop them.
  if (webhookWorker.status === 'fulfilled') held.webhookWorker = webhookWorker.value;
  if (ingestWorker.status === 'fulfilled') held.ingestWorker = ingestWorker.value;
  if (heartbeat.status === 'fulfilled') held.heartbeat = heartbeat.value;
  for (const part of [webhookWorker, ingestWorker, heartbeat]) if (part.status === 'rejected') throw part.reason;
  // A thread that failed to start fails the start with its own error, whoever wrote the first beats.
  await liveness.firstBeat;
  logger.info(
    { graphs: registry.ids(), concurrency, shards: config.shards, queuePrefix: config.queuePrefix },
    'agentq worker started',
  );

  return {
    registry,
    store,
    sweep: () => reconciler.sweep(),
    close: closeOnce([tokenizerLoad, providerBatches?.collector], { ...held, config }),
  };
}

/**
 * The tokenizer that counts prompts (summaries, budgets) costs this thread 0.2–0.5 s to load: loaded once
 * the worker is idle, not as the first jobs arrive (after a crash, the dead worker's steps: it held up
 * their model requests), nor before the first take; a worker busy from its start loads it on first use.
 * Idle: no node running, and nothing came to the starts gate (a step start, a run's intake, a model
 * request) since the last look: a run being taken in or a step committing runs no node. Loaded while
 * model answers arrive, it would also delay their reading, and a kill meanwhile pay for them again.
 */
function tokenizerWhenIdle(
  { activeSteps, startsGate }: { activeSteps: ActiveSteps; startsGate: TurnGate },
  logger: Logger,
): IdleLoad {
  let arrivals = startsGate.arrivals;
  return loadWhenIdle({
    busy: () => {
      const came = startsGate.arrivals !== arrivals;
      arrivals = startsGate.arrivals;
      return came || activeSteps.size > 0;
    },
    load: loadTokenizer,
    onError: (error) => logger.warn({ err: String(error) }, 'could not load the tokenizer'),
    pollMs: TOKENIZER_IDLE_POLL_MS,
  });
}

/** Batches: when a run of a batch finishes, its slot goes to the batch's next question. */
function dispatchBatches(
  finishedHooks: FinishedHook[],
  {
    redis,
    store,
    stepQueues,
    config,
    eagerStarts,
  }: {
    redis: RedisConnection;
    store: RedisRunStore;
    stepQueues: StepQueues;
    config: Config;
    eagerStarts: EagerStarts;
  },
): BatchDispatcher {
  const batches = new BatchDispatcher({
    redis,
    keys: store.keys,
    store,
    // The next question's run goes in with its start job (one script), taken into the slot the finished
    // run's last step offered (EagerStarts), else left for the worker that takes it from the queue.
    enqueuer: new RunEnqueuer(store, stepQueues, config),
    retentionSeconds: config.retentionSeconds,
    // Batches with a deadline or a budget are planned from these (and the tenant's measured runs).
    autopilot: autopilotSettingsOf(config),
  });
  finishedHooks.push(async (runId, status, { batchId, usageFields }) => {
    if (batchId)
      await batches.onRunFinished(runId, batchId, status, { offer: eagerStarts.offerOf(runId), usageFields });
  });
  return batches;
}

/**
 * A worker's close: what is stopped first (a load left for an idle moment, the provider-batch collector),
 * then the rest; a second call gets the first's promise.
 */
function closeOnce(
  first: ({ stop(): Promise<void> | void } | undefined)[],
  parts: Parameters<typeof stopWorker>[0],
): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => {
    closing ??= (async () => {
      for (const part of first) await part?.stop();
      await stopWorker(parts);
    })();
    return closing;
  };
}
