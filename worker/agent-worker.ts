import type { Config } from '../shared/config/config.js';
import type { AnyGraph } from '../shared/graph/graph.js';
import type { GraphRegistry } from '../shared/graph/graph-registry.js';
import type { Services } from '../shared/graph/node-context.js';
import type { Logger } from '../shared/telemetry/logger.js';
import type { Telemetry } from '../shared/telemetry/telemetry.js';
import type { StepObserver } from '../shared/graph/step-observer.js';
import type { McpServers } from '../shared/config/mcp-servers-schema.js';
import type { FlushPoint } from './provider-batches/provider-batch-flush.js';
import type { RedisRunStore } from '../shared/store/redis-run-store.js';
import type { SweepReport } from './operations/reconciler.js';
import type { AnyTool } from '../shared/ports/define-tool.js';

// What startWorker takes and returns (start-worker.ts).

export interface StartWorkerOptions {
  /** Your graphs, registered beside the built-in ones. */
  graphs?: AnyGraph[];
  /** Register the built-in graphs (`chain`, …). @default true */
  builtInGraphs?: boolean;
  /** Services every node receives in `context.services`, over the defaults. @default createDefaultServices(config): language model (LLM_MODEL), tools, agent limits */
  services?: Services;
  /** Your tools, registered beside the built-in ones (`calculator`, `current_time`). @default [] */
  tools?: AnyTool[];
  /** @default loadConfig() (the environment) */
  config?: Config;
  /** Steps run at once in this process. @default config.concurrency */
  concurrency?: number;
  /** @default a pino logger on stderr */
  logger?: Logger;
  /** Sweep for runs without a live job. @default true */
  reconciler?: boolean;
  /** @default startTelemetry() (on only when OTEL_* configures an exporter) */
  telemetry?: Telemetry;
  /** Watch node executions (metrics, benchmarks) without touching the nodes. @default [] */
  observers?: StepObserver[];
  /** MCP servers whose tools agents may call, by name (stdio or streamable HTTP). @default config.mcpServers (AGENTQ_MCP_SERVERS) */
  mcpServers?: McpServers;
  /** Called at each point of a provider batch's life; chaos tests kill the process there. @default none */
  onProviderBatchPoint?: (point: FlushPoint, flushId: string) => void | Promise<void>;
}

export interface AgentWorker {
  readonly registry: GraphRegistry;
  readonly store: RedisRunStore;
  /** One reconciler sweep now (tests and operators). */
  sweep(): Promise<SweepReport>;
  /**
   * Graceful shutdown: stop taking jobs; let active steps finish within the grace period
   * (AGENTQ_SHUTDOWN_GRACE_MS); then abort the rest, releasing their jobs to other workers without
   * spending an attempt. Bounded whatever Redis's state: by the grace plus AGENTQ_SHUTDOWN_RELEASE_MS it
   * resolves, having dropped what it could not release and named it in its last log line (stop-worker.ts).
   */
  close(): Promise<void>;
}
