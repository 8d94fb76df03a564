/**
 * `agentq/api`: the HTTP API (docs/reference/http-api.md) in your process: `createApi` a Fastify instance
 * (tests, embedding), `startApi` to listen, `ApiKeys` to manage its keys. The `agentq api` command is the
 * CLI's (bin/agentq-program.ts loads it on its own).
 */
export { createApi, type ApiInstance, type ApiRoutes, type CreateApiOptions } from './create-api.js';
export { startApi, type RunningApi, type StartApiOptions } from './start-api.js';
export type { ApiContext } from './api-context.js';
export { ApiKeys, type Principal, type Role } from './auth/api-keys.js';
export type { ApiErrorCode, ErrorBody } from './errors.js';
