import { loadConfig } from '../../shared/config/config.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { ApiKeys } from './auth/api-keys.js';
import { createApi, type CreateApiOptions } from './create-api.js';
import { BoundedShutdown } from '../../shared/operations/bounded-shutdown.js';

export interface StartApiOptions extends CreateApiOptions {
  /** @default config.port (PORT, 3000); 0 picks a free port */
  port?: number;
  /** @default config.host (HOST, 127.0.0.1); forced to 127.0.0.1 while no API key is configured */
  host?: string;
}

export interface RunningApi {
  /** Where it listens, e.g. `http://127.0.0.1:3000`. */
  readonly url: string;
  close(): Promise<void>;
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * Starts the HTTP API and listens. With no API key configured the API is open (every caller is the
 * default tenant with the admin role), so it binds to loopback only and says so in a warning.
 */
export async function startApi(options: StartApiOptions = {}): Promise<RunningApi> {
  const config = options.config ?? loadConfig();
  const logger = options.logger ?? createLogger(config.logLevel, { role: 'api' });
  const apiKeys = options.apiKeys ?? ApiKeys.fromConfig(config);
  let host = options.host ?? config.host;
  if (apiKeys.isOpen) {
    if (!isLoopback(host)) host = '127.0.0.1';
    logger.warn(
      { host, tenant: config.tenant },
      'no API keys configured (AGENTQ_API_KEYS, AGENTQ_API_KEYS_FILE): the API is open, every caller acts as the default tenant with the admin role, so it listens on loopback only',
    );
  }
  const app = await createApi({ ...options, config, logger, apiKeys });
  try {
    const url = await app.listen({ port: options.port ?? config.port, host });
    logger.info(
      { url, keys: apiKeys.size, docs: `${url}/docs`, dashboard: `${url}/admin/queues` },
      'agentq API listening',
    );
    return {
      url,
      // Bounded whatever Redis's state: in-flight requests get the grace period, and what is
      // still open after it and AGENTQ_SHUTDOWN_RELEASE_MS is cut and named in the last log line.
      async close() {
        const shutdown = new BoundedShutdown(Date.now() + config.shutdownGraceMs + config.shutdownReleaseMs, logger);
        await shutdown.stage([
          {
            name: 'HTTP server and its Redis connections',
            run: () => app.close(),
            force: () => app.server.closeAllConnections(),
          },
        ]);
        shutdown.finish('API');
      },
    };
  } catch (error) {
    await app.close();
    throw error;
  }
}
