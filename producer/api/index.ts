/**
 * The HTTP API (docs/reference/http-api.md): `createApi` for tests and embedding, `startApi` to listen, the `agentq
 * api` command.
 */
export { createApi, type ApiInstance, type ApiRoutes, type CreateApiOptions } from './create-api.js';
export { startApi, type RunningApi, type StartApiOptions } from './start-api.js';
export { registerApiCommand } from './api-command.js';
export type { ApiContext } from './api-context.js';
export { ApiKeys, type Principal, type Role } from './auth/api-keys.js';
export { ApiError, type ApiErrorCode, type ErrorBody } from './errors.js';
