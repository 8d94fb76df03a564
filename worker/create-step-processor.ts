import type { Config } from '../shared/config/config.js';
import type { Services } from '../shared/graph/node-context.js';
import type { GraphRegistry } from '../shared/graph/graph-registry.js';
import type { LanguageModel } from '../shared/ports/language-model.js';
import type { Logger } from '../shared/telemetry/logger.js';
import type { Telemetry } from '../shared/telemetry/telemetry.js';
import type { WarningGate } from '../shared/telemetry/warning-gate.js';
import type { RedisConnection } from '../shared/redis/connect-redis.js';
import type { RedisRunStore } from '../shared/store/redis-run-store.js';
import type { StepQueues } from '../shared/store/step-queues.js';
import type { McpConnections } from '../shared/adapters/mcp/connect-mcp-servers.js';
import { ChildLinks } from '../shared/store/child-links.js';
import { ChildRuns } from '../shared/operations/runs/child-runs.js';
import { RunEnqueuer } from '../shared/operations/runs/run-enqueuer.js';
import { pacedLanguageModel } from './agents/llm/paced-language-model.js';
import type { ActiveSteps } from './engine/active-steps.js';
import type { IntakeProcessor } from './engine/intake-processor.js';
import { PaidClaims } from './engine/paid-claims.js';
import { StateCache } from './engine/state-cache.js';
import type { EagerStarts } from './engine/eager-starts.js';
import { StepProcessor } from './engine/step-processor.js';
import { StepTransitions } from './engine/step-transitions.js';
import type { StepJobs } from './engine/step-jobs.js';
import { providerBatchesOf } from './provider-batches/provider-batches-of.js';
import type { Liveness } from './runtime/liveness-thread.js';
import { TurnGate } from './runtime/turn-gate.js';
import { createDefaultServices } from './default-services.js';
import type { StartWorkerOptions } from './agent-worker.js';
import { FairQueue } from '../shared/store/fair-queue.js';

export interface StepProcessorParts {
  options: StartWorkerOptions;
  config: Config;
  logger: Logger;
  telemetry: Telemetry;
  warnings: WarningGate;
  registry: GraphRegistry;
  mcp: McpConnections;
  redis: RedisConnection;
  stepRedis: RedisConnection;
  store: RedisRunStore;
  stepQueues: StepQueues;
  liveness: Liveness;
  stepJobs: StepJobs;
  activeSteps: ActiveSteps;
  intakeProcessor: IntakeProcessor;
  /** The slots batch runs' last steps offer to their batch's next question (shared with the batch hook). */
  eagerStarts: EagerStarts;
}

/**
 * The step processor and what it runs with: the services graphs get (default ones, the caller's tools
 * and MCP tools, provider batches), the step transitions, claims on paid work, and the process's one
 * turn gate.
 */
export async function createStepProcessor(parts: StepProcessorParts) {
  const { options, config, logger, telemetry, warnings, registry, mcp, redis, stepRedis, store } = parts;
  const transitions = new StepTransitions({
    store,
    redis: stepRedis,
    queuePrefix: config.queuePrefix,
    shards: config.shards,
    // The lock a step job gets when taken or handed on: long, so that no stall of this process's event
    // loop loses it before the liveness thread holds it (and renews it to AGENTQ_LOCK_DURATION_MS).
    lockDurationMs: config.takeLockMs,
    keepCompletedJobs: config.keepCompletedJobs,
    attemptsOf: (graphId, node) => parts.stepJobs.attemptsOf(graphId, node),
    fair: new FairQueue(store.keys, config.tenantWeights),
  });
  // One gate for the process: its event loop is what the gate keeps responsive.
  const startsGate = new TurnGate(config.stepStartsPerTurn);
  const claims = new PaidClaims({
    redis: stepRedis,
    keys: store.keys,
    processId: parts.liveness.processId,
    logger,
    takeoverMs: config.paidClaimTakeoverMs,
    pauseMs: config.livenessTtlMs,
    warnings,
    rescue: (lua, keys, args) => parts.liveness.runScript(lua, keys, args),
  });
  // Model calls of batches submitted with providerBatch go through the provider's Batch API.
  const providerBatches = providerBatchesOf({
    config,
    redis,
    store,
    stepQueues: parts.stepQueues,
    logger,
    telemetry,
    ...(options.onProviderBatchPoint ? { onPoint: options.onProviderBatchPoint } : {}),
  });
  const services: Services = {
    ...createDefaultServices(config, { tools: [...(options.tools ?? []), ...mcp.tools], redis }),
    ...(providerBatches ? { providerBatchRouter: providerBatches.router } : {}),
    childRuns: new ChildRuns({
      links: new ChildLinks(redis, store.keys),
      enqueuer: new RunEnqueuer(store, parts.stepQueues, config),
      parkMs: config.childRunParkMs,
    }),
    ...options.services,
  };
  // Model requests start through the same gate as steps: a burst of them cannot hold the loop.
  if (services.languageModel)
    services.languageModel = pacedLanguageModel(services.languageModel as LanguageModel, startsGate);
  const stepProcessor = new StepProcessor({
    claims,
    paidClaimMs: config.paidClaimMs,
    callbacks: {
      secret: config.callbackSecret,
      baseUrl: (config.publicUrl ?? `http://${config.host}:${config.port}`).replace(/\/+$/, ''),
    },
    store,
    registry,
    transitions,
    stateCache: new StateCache(config.stateCacheSize),
    eagerHops: config.eagerHops,
    eagerStarts: parts.eagerStarts,
    activeSteps: parts.activeSteps,
    services,
    logger,
    telemetry,
    observers: options.observers ?? [],
    admitStart: parts.intakeProcessor.admitStart,
    redisFaultDelayMs: config.redisFaultDelayMs,
    warnings,
  });
  // A worker with a model counts its prompts (summaries, budgets): start-worker.ts loads the tokenizer.
  return {
    stepProcessor,
    transitions,
    startsGate,
    providerBatches,
    countsTokens: services.languageModel !== undefined,
  };
}
