import { RunReader } from '../../producer/client/run-reader.js';
import { startStallingTcpProxy, type StallingTcpProxy } from './stalling-tcp-proxy.js';
import { testConfig, type TestEnv } from './test-env.js';

/**
 * A reader of `env`'s runs whose connection goes through a stalling proxy, with a short command timeout:
 * the proxy's stalls make its commands time out while Redis still runs them afterwards.
 */
export async function startStalledReader(
  env: TestEnv,
  commandTimeoutMs: number,
): Promise<{ proxy: StallingTcpProxy; reader: RunReader; close(): Promise<void> }> {
  const proxy = await startStallingTcpProxy(Number(new URL(env.config.redisUrl!).port));
  const reader = new RunReader({
    config: testConfig({
      REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
      AGENTQ_KEY_PREFIX: env.config.keyPrefix,
      AGENTQ_QUEUE_PREFIX: env.config.queuePrefix,
      AGENTQ_REDIS_COMMAND_TIMEOUT_MS: String(commandTimeoutMs),
    }),
  });
  return {
    proxy,
    reader,
    async close() {
      await reader.close();
      await proxy.close();
    },
  };
}
