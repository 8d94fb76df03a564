import { createServer } from 'node:net';
import { startApiTestEnv, type ApiTestEnv } from './api-test-env.js';

/** A loopback port free now: a test's server listens on it after a config already names it. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * startApiTestEnv with the API listening over HTTP on a loopback port; `options` gets the API's address
 * first, so the worker's AGENTQ_PUBLIC_URL (the base of callback URLs) can name it before it listens.
 */
export async function startListeningApiEnv(
  options: (base: string) => Parameters<typeof startApiTestEnv>[0],
): Promise<{ env: ApiTestEnv; base: string }> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = await startApiTestEnv(options(base));
  await env.app.listen({ port, host: '127.0.0.1' });
  return { env, base };
}
