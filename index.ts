/**
 * agentq as a library: define graphs, run workers with them, enqueue and follow runs.
 *
 * ```ts
 * import { defineGraph, channel, START, END, startWorker, AgentClient } from 'agentq';
 * ```
 */
export { defineGraph, GraphBuilder, type GraphDefinition } from './shared/graph/define-graph.js';
export { channel, type Channel, type Channels, type StateOf, type UpdateOf } from './shared/graph/channels.js';
export { START, END, Send, type AnyGraph, type Graph, type NodeFunction, type NodeOptions, type NodeResult, type Router, type Task } from './shared/graph/graph.js';
export { GraphRegistry } from './shared/graph/graph-registry.js';
export type { NodeContext, Services } from './shared/graph/node-context.js';
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from './shared/graph/retry-policy.js';
export { AgentqError, ERROR_CODES, type ErrorCode, type ErrorRecord } from './shared/errors.js';
export { loadConfig, type Config } from './shared/config.js';
export { INTAKE_QUEUE, STEP_QUEUE } from './shared/queues.js';
export { runJobSchema, type RunJob, type RunOptions } from './shared/job-schema.js';
export type { Message, RunEvent, RunRecord, RunStatus, StepRecord } from './shared/run-record.js';
export { sleep } from './shared/abort.js';
export { startWorker, type AgentWorker, type StartWorkerOptions } from './worker/start-worker.js';
export { chainGraph } from './worker/graphs/chain.js';
export { AgentClient, type AgentClientOptions, type EnqueueRequest } from './producer/agent-client.js';
