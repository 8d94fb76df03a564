import { Queue } from 'bullmq';
import { loadConfig, type Config } from '../shared/config/config.js';
import { GraphRegistry } from '../shared/graph/graph-registry.js';
import type { Services } from '../shared/graph/node-context.js';
import type { LanguageModel } from '../shared/ports/language-model.js';
import { createLogger, type Logger } from '../shared/telemetry/logger.js';
import {
  INGEST_QUEUE,
  INTAKE_QUEUE,
  queueStreamOptions,
  SCHEDULES_QUEUE,
  STEP_QUEUE,
  WEBHOOK_QUEUE,
} from '../shared/contracts/queues.js';
import { Schedules } from '../shared/operations/schedules/schedules.js';
import { ScheduleTickProcessor } from './operations/schedule-tick-processor.js';
import { StepQueues } from '../shared/store/step-queues.js';
import { stepQueuePrefix } from '../shared/contracts/shards.js';
import { assertBullmqPinned } from '../shared/bullmq/bullmq-functions.js';
import { queueQualifiedName } from '../shared/bullmq/bullmq-keys.js';
import { checkStepLayout } from './engine/check-step-layout.js';
import { StateCache } from './engine/state-cache.js';
import { startLiveness } from './runtime/liveness-thread.js';
import { workerLanguageModel } from './agents/llm/paced-language-model.js';
import { PaidClaims } from './engine/paid-claims.js';
import { TurnGate } from './runtime/turn-gate.js';
import { StepTransitions } from './engine/step-transitions.js';
import { RedisRunStore, type FinishedRun } from '../shared/store/redis-run-store.js';
import { ActiveSteps } from './engine/active-steps.js';
import { builtInGraphs } from './agents/graphs/built-in-graphs.js';
import { createDefaultServices } from './default-services.js';
import { IntakeProcessor } from './engine/intake-processor.js';
import { Reconciler } from './operations/reconciler.js';
import { checkRedisDurability } from './operations/check-redis-durability.js';
import { StepJobs } from './engine/step-jobs.js';
import { StepProcessor } from './engine/step-processor.js';
import { BatchDispatcher } from '../shared/operations/batches/batch-dispatcher.js';
import { RunEnqueuer } from '../shared/operations/runs/run-enqueuer.js';
import { createRunFinishedHook } from '../shared/operations/runs/run-finished-hook.js';
import { startWebhookWorker } from './operations/webhooks/start-webhook-worker.js';
import { startIngestWorker } from './ingest/start-ingest-worker.js';
import { startTelemetry } from '../shared/telemetry/telemetry.js';
import { connectMcpServers, type McpConnections } from '../shared/adapters/mcp/connect-mcp-servers.js';
import { ServedGraphs } from '../shared/store/served-graphs.js';
import { startServedGraphsHeartbeat } from './operations/served-graphs-heartbeat.js';
import { assertRedisReachable } from '../shared/redis/assert-redis-reachable.js';
import { checkRedisCluster } from '../shared/redis/check-redis-cluster.js';
import { connectRedis } from '../shared/redis/connect-redis.js';
import { bullmqConnection } from '../shared/bullmq/bullmq-connection.js';
import { WarningGate, warningKind } from '../shared/telemetry/warning-gate.js';
import { startJobWorkers } from './start-job-workers.js';
import { stopWorker } from './stop-worker.js';
import { providerBatchesOf } from './provider-batches/provider-batches-of.js';

import type { AgentWorker, StartWorkerOptions } from './agent-worker.js';
export type { AgentWorker, StartWorkerOptions };

/**
 * Starts a worker process's share of agentq: the intake (raw and client jobs), the step processor and
 * the reconciler. A step job's lock lasts AGENTQ_TAKE_LOCK_MS (30 s) from when it is taken until the
 * liveness thread holds it, then AGENTQ_LOCK_DURATION_MS (3 s), renewed every beat by the thread: a
 * blocked event loop keeps its jobs. A dead process's locks are released by its peers' liveness threads
 * once its liveness key lapses (3 s), and the stalled-job check (AGENTQ_STALLED_INTERVAL_MS 1 s) then
 * puts the step back: about 3-5 s in all.
 */
export async function startWorker(options: StartWorkerOptions = {}): Promise<AgentWorker> {
  const config = options.config ?? loadConfig();
  const logger = options.logger ?? createLogger(config.logLevel, { role: 'worker' });
  const registry = new GraphRegistry(options.builtInGraphs === false ? [] : builtInGraphs());
  for (const graph of options.graphs ?? []) registry.register(graph);
  // Before any connection is opened: a bad MCP server fails the start with nothing to clean up.
  const mcp = await connectMcpServers(options.mcpServers ?? config.mcpServers, {
    logger,
    connectTimeoutMs: config.mcpConnectTimeoutMs,
    callTimeoutMs: config.mcpCallTimeoutMs,
  });
  try {
    return await startConnected(options, config, logger, registry, mcp);
  } catch (error) {
    // A start that fails after the MCP servers connected leaves no stdio process or HTTP session behind.
    await mcp.close();
    throw error;
  }
}

/** The rest of the start, once the MCP servers are connected. */
async function startConnected(
  options: StartWorkerOptions,
  config: Config,
  logger: Logger,
  registry: GraphRegistry,
  mcp: McpConnections,
): Promise<AgentWorker> {
  // The step scripts run BullMQ's own scripts with the KEYS/ARGV layout of the pinned version.
  assertBullmqPinned();
  // A clear error instead of a silent wait when Redis is down, or a Cluster that is not whole.
  if (config.redisClusterNodes) await checkRedisCluster(config.redisClusterNodes);
  else await assertRedisReachable(config.redisUrl);
  const telemetry = options.telemetry ?? (await startTelemetry());
  const redis = connectRedis(config, 'worker');
  // A step's BEGIN and COMMIT, and the step queue (RunStoreOptions.stepRedis).
  const stepRedis = connectRedis(config, 'worker');
  await Promise.all([checkRedisDurability(redis, config, logger), checkStepLayout(redis, config)]).catch(
    (error: unknown) => {
      redis.disconnect();
      stepRedis.disconnect();
      throw error;
    },
  );
  // Each runs after a run reached a terminal state, whichever way it got there.
  const finishedHooks: ((
    runId: string,
    status: 'completed' | 'failed' | 'cancelled',
    run: FinishedRun,
  ) => Promise<void>)[] = [];
  const store = new RedisRunStore(redis, {
    keyPrefix: config.keyPrefix,
    shards: config.shards,
    retentionSeconds: config.retentionSeconds,
    eventsMaxLen: config.eventsMaxLen,
    recording: { mode: config.recording, maxBytes: config.recordingMaxBytes },
    stepRedis,
    onFinished: async (runId, status, run) => {
      // Independent of each other (metrics, webhook, batch slot, trace, observers): all at once, so the
      // batch's next question does not wait behind the others' round trips.
      await Promise.all(
        finishedHooks.map((hook) =>
          hook(runId, status, run).catch((error: unknown) =>
            logger.warn({ runId, err: String(error) }, 'run-finished hook failed'),
          ),
        ),
      );
    },
  });
  for (const observer of options.observers ?? []) {
    if (observer.onRunFinished) finishedHooks.push(async (runId, status) => observer.onRunFinished?.(runId, status));
  }
  const runFinished = createRunFinishedHook({ redis, config, logger }); // metrics, in-flight cap, webhook job
  finishedHooks.push(runFinished);
  if (telemetry.enabled) {
    finishedHooks.push(async (runId) => {
      const meta = await store.reads.get(runId);
      if (!meta) return;
      telemetry.emitRunSpan({
        trace: meta.trace,
        runId,
        graph: meta.graph,
        graphVersion: meta.graphVersion,
        status: meta.status,
        stepCount: meta.stepCount,
        errorCode: meta.error?.code,
        errorMessage: meta.error?.message,
        startTime: meta.createdAt,
        endTime: meta.updatedAt,
      });
    });
  }
  const bullmq = bullmqConnection(config, 'worker');
  const connection = bullmq.connection;
  const bullmqTelemetry = telemetry.bullmq ? { telemetry: telemetry.bullmq } : {};
  const queueOptions = {
    connection,
    prefix: config.queuePrefix,
    ...bullmqTelemetry,
    ...queueStreamOptions(config.queueEventsMaxLen),
  };
  // One step queue per shard (AGENTQ_SHARDS), under the shard's prefix: a run's keys share its tag.
  const stepQueues = new StepQueues(config.shards, config.queuePrefix, { ...queueOptions, connection: stepRedis });
  const intakeQueue = new Queue(INTAKE_QUEUE, queueOptions);
  const stepJobs = new StepJobs(stepQueues, registry);
  const served = new ServedGraphs({ redis, keys: store.keys, heartbeatMs: config.graphHeartbeatMs });
  const intakeProcessor = new IntakeProcessor({ store, registry, stepJobs, config, logger, telemetry, served });
  // Batches: when a run of a batch finishes, its slot goes to the batch's next question.
  const batches = new BatchDispatcher({
    redis,
    keys: store.keys,
    store,
    // The next question's run goes in with its start job (one script); the worker taking it takes it in.
    enqueuer: new RunEnqueuer(store, stepQueues, config),
    retentionSeconds: config.retentionSeconds,
  });
  finishedHooks.push(async (runId, status, { batchId }) => {
    if (batchId) await batches.onRunFinished(runId, batchId, status);
  });
  // Repeated warnings (a Redis outage) as one line per kind per interval, with a count.
  const warnings = new WarningGate(logger, config.warnIntervalMs);
  const activeSteps = new ActiveSteps();
  await activeSteps.listen(connectRedis(config, 'blocking'), store.keys.cancelChannel(), logger);

  const transitions = new StepTransitions({
    store,
    redis: stepRedis,
    queuePrefix: config.queuePrefix,
    shards: config.shards,
    // The lock a step job gets when taken or handed on: long, so that no stall of this process's event
    // loop loses it before the liveness thread holds it (and renews it to AGENTQ_LOCK_DURATION_MS).
    lockDurationMs: config.takeLockMs,
    keepCompletedJobs: config.keepCompletedJobs,
    attemptsOf: (graphId, node) => stepJobs.attemptsOf(graphId, node),
  });
  // Liveness from a thread of its own, and claims on paid work that respect it.
  const stepQueueKeys = Array.from({ length: config.shards }, (_value, shard) =>
    queueQualifiedName(stepQueuePrefix(config.queuePrefix, shard, config.shards), STEP_QUEUE),
  );
  const liveness = startLiveness({
    redis: config,
    alivePrefixes: Array.from({ length: config.shards }, (_value, shard) => store.keys.alivePrefix(shard)),
    intervalMs: config.livenessIntervalMs,
    ttlMs: config.livenessTtlMs,
    lockMs: config.lockDurationMs,
    registryKey: store.keys.livenessRegistry(),
    // Every queue of agentq, whether this process takes from it or not: a dead peer may have.
    reapQueues: [
      ...stepQueueKeys,
      ...[INTAKE_QUEUE, SCHEDULES_QUEUE, WEBHOOK_QUEUE, INGEST_QUEUE].map((name) =>
        queueQualifiedName(config.queuePrefix, name),
      ),
    ],
    heldQueues: stepQueueKeys,
    onReaped: (processId, released) =>
      logger.info({ processId, released }, 'a worker process stopped beating: its job locks are released'),
    onLost: (released) =>
      logger.info({ released }, 'reconnected to Redis: released the step jobs taken as the connection dropped'),
  });
  // Redis answered the checks above; a thread that still cannot write within 5 s is said, not waited for
  // (this process's claims then look dead to others, which is how a worker without liveness behaved).
  const beating = await Promise.race([
    liveness.ready.then(() => true),
    new Promise<false>((resolve) => setTimeout(() => resolve(false), 5000).unref()),
  ]);
  if (!beating)
    logger.warn(
      'liveness thread has not written its first beat within 5 s; claims on paid work by this worker may be taken over',
    );
  // One gate for the process: its event loop is what the gate keeps responsive.
  const startsGate = new TurnGate(config.stepStartsPerTurn);
  const claims = new PaidClaims({
    redis: stepRedis,
    keys: store.keys,
    processId: liveness.processId,
    logger,
    takeoverMs: config.paidClaimTakeoverMs,
    pauseMs: config.livenessTtlMs,
    warnings,
  });
  // Model calls of batches submitted with providerBatch go through the provider's Batch API.
  const providerBatches = providerBatchesOf({
    config,
    redis,
    store,
    stepQueues,
    logger,
    telemetry,
    ...(options.onProviderBatchPoint ? { onPoint: options.onProviderBatchPoint } : {}),
  });
  const services: Services = {
    ...createDefaultServices(config, { tools: [...(options.tools ?? []), ...mcp.tools], redis }),
    ...(providerBatches ? { providerBatchRouter: providerBatches.router } : {}),
    ...options.services,
  };
  // Model requests start through the same gate as steps: a burst of them cannot hold the loop.
  if (services.languageModel)
    services.languageModel = await workerLanguageModel(services.languageModel as LanguageModel, startsGate);
  const stepProcessor = new StepProcessor({
    claims,
    paidClaimMs: config.paidClaimMs,
    store,
    registry,
    transitions,
    stateCache: new StateCache(config.stateCacheSize),
    eagerHops: config.eagerHops,
    activeSteps,
    services,
    logger,
    telemetry,
    observers: options.observers ?? [],
    admitStart: intakeProcessor.admitStart,
    redisFaultDelayMs: config.redisFaultDelayMs,
    warnings,
  });
  const concurrency = options.concurrency ?? config.concurrency;
  // Schedule ticks: BullMQ's job schedulers add one job per tick; any worker may take it.
  const schedulesQueue = new Queue(SCHEDULES_QUEUE, queueOptions);
  const schedules = new Schedules({ redis, keys: store.keys, queue: schedulesQueue });
  const tickProcessor = new ScheduleTickProcessor({
    schedules,
    enqueuer: new RunEnqueuer(store, stepQueues, config, intakeProcessor.admitInline),
    logger,
  });
  const {
    stepWorkers,
    intakeWorker,
    scheduleWorker,
    all: jobWorkers,
  } = startJobWorkers({
    config,
    registry,
    connection,
    stepQueues,
    stepProcessor,
    transitions,
    intakeProcessor,
    tickProcess: tickProcessor.process,
    liveness,
    startsGate,
    telemetry,
    concurrency,
    warnings,
    logger,
  });
  // Without a listener BullMQ prints a queue's connection errors raw on stderr, outside the JSON logs.
  for (const queue of [...stepQueues.all(), intakeQueue, schedulesQueue]) {
    queue.on('error', (error) =>
      warnings.warn(
        warningKind('queue connection error', error),
        { err: error.message },
        'queue connection error (will retry)',
      ),
    );
  }
  const reconciler = new Reconciler({
    store,
    stepJobs,
    intakeQueue,
    batches,
    logger,
    intervalMs: config.reconcileIntervalMs,
    staleAfterMs: config.reconcileAfterMs,
  });
  if (options.reconciler !== false) reconciler.start();
  providerBatches?.collector.start();
  await Promise.all([
    ...stepWorkers.map((worker) => worker.waitUntilReady()),
    intakeWorker.waitUntilReady(),
    scheduleWorker.waitUntilReady(),
  ]);
  const webhookWorker = await startWebhookWorker({ config, store, logger, processId: liveness.processId });
  // Document ingestion: its own queue and BullMQ Worker, parsing in worker threads (worker/ingest).
  const ingestWorker = await startIngestWorker({ config, logger, processId: liveness.processId });
  const heartbeat = await startServedGraphsHeartbeat({ served, registry, intervalMs: config.graphHeartbeatMs, logger });
  logger.info(
    { graphs: registry.ids(), concurrency, shards: config.shards, queuePrefix: config.queuePrefix },
    'agentq worker started',
  );

  let closing: Promise<void> | undefined;
  return {
    registry,
    store,
    sweep: () => reconciler.sweep(),
    close() {
      closing ??= (providerBatches?.collector.stop() ?? Promise.resolve()).then(() =>
        stopWorker({
          config,
          logger,
          warnings,
          activeSteps,
          heartbeat,
          reconciler,
          jobWorkers,
          ingestWorker,
          webhookWorker,
          queues: [...stepQueues.all(), intakeQueue, schedulesQueue],
          runFinished,
          bullmq,
          telemetry,
          mcp,
          liveness,
          connections: [redis, stepRedis],
        }),
      );
      return closing;
    },
  };
}
