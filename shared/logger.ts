import { pino, type Logger } from 'pino';

/**
 * pino JSON on stderr: stdout belongs to the CLI's results. Secrets are redacted wherever they appear
 * under the usual names.
 */
export function createLogger(level = 'info', bindings: Record<string, unknown> = {}): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid, ...bindings },
      redact: {
        paths: ['apiKey', '*.apiKey', 'authorization', '*.authorization', 'headers.authorization', 'password', '*.password'],
        censor: '[redacted]',
      },
    },
    pino.destination({ dest: 2, sync: false }),
  );
}

export type { Logger };
