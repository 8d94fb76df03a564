import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { createApi, type ApiInstance, type CreateApiOptions } from '../../producer/api/create-api.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { startTestEnv, testConfig, type TestEnv } from './test-env.js';
import type { StartWorkerOptions } from '../../worker/start-worker.js';

/** API keys of the API tests: two tenants, and an admin for one of them. */
export const KEYS = {
  acmeProducer: 'acme-producer-key-0123456789',
  acmeAdmin: 'acme-admin-key-0123456789abcdef',
  globexProducer: 'globex-producer-key-0123456789',
} as const;

export const KEY_TENANT: Record<string, string> = {
  [KEYS.acmeProducer]: 'acme',
  [KEYS.acmeAdmin]: 'acme',
  [KEYS.globexProducer]: 'globex',
};

export const API_KEYS_ENV = `${KEYS.acmeProducer}:acme:producer,${KEYS.acmeAdmin}:acme:admin,${KEYS.globexProducer}:globex:producer`;

export function bearer(key: string): Record<string, string> {
  return { authorization: `Bearer ${key}` };
}

export interface ApiTestEnv extends TestEnv {
  app: ApiInstance;
  /** `app.inject` with the key's Bearer header. */
  as(key: string, options: InjectOptions): Promise<LightMyRequestResponse>;
}

/** A real worker and client (startTestEnv) plus the API on the same config, with the test keys. */
export async function startApiTestEnv(
  options: Omit<StartWorkerOptions, 'config'> & {
    env?: Record<string, string>;
    api?: Omit<CreateApiOptions, 'config'>;
  } = {},
): Promise<ApiTestEnv> {
  const { env = {}, api = {}, ...workerOptions } = options;
  const testEnv = await startTestEnv({ ...workerOptions, env: { AGENTQ_API_KEYS: API_KEYS_ENV, ...env } });
  const app = await createApi({ config: testEnv.config, logger: createLogger(testEnv.config.logLevel), ...api });
  return {
    ...testEnv,
    app,
    as: (key, injectOptions) =>
      app.inject({ ...injectOptions, headers: { ...bearer(key), ...(injectOptions.headers ?? {}) } }),
    async close() {
      await app.close();
      await testEnv.close();
    },
  };
}

/** The API alone (no worker) on a fresh test config: fuzzing and Redis-outage tests. */
export async function createTestApi(
  env: Record<string, string> = {},
  api: Omit<CreateApiOptions, 'config'> = {},
): Promise<ApiInstance> {
  const config = testConfig({ AGENTQ_API_KEYS: API_KEYS_ENV, ...env });
  return createApi({ config, logger: createLogger(config.logLevel), ...api });
}

/** The parsed JSON body of an answer. */
export function json<T = Record<string, unknown>>(response: LightMyRequestResponse): T {
  return JSON.parse(response.body) as T;
}

/** True when `body` is the API's one error shape. */
export function isErrorShape(body: unknown): boolean {
  if (typeof body !== 'object' || body === null) return false;
  const error = (body as { error?: unknown }).error;
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  return typeof code === 'string' && /^[A-Z_]+$/.test(code) && typeof message === 'string' && message.length > 0;
}
