import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import type { fetch as undiciFetch } from 'undici';
import { AgentqError } from '../../contracts/errors.js';

/** How the adapter reaches GigaChat's hosts (both the OAuth endpoint and the API). */
export interface GigaChatHttp {
  fetch(url: string, init: RequestInit): Promise<Response>;
}

export interface GigaChatTlsOptions {
  /** PEM certificates trusted besides the system's (GIGACHAT_CA_FILE). @default none */
  caFile?: string;
  /** Skip the certificate check (GIGACHAT_INSECURE_TLS). @default false */
  insecureTls?: boolean;
}

/**
 * Fetch through a connection pool that trusts GigaChat's certificate authority: its hosts present
 * certificates of the Russian Trusted Root CA, which few systems carry, so it is added to (not put in
 * place of) the usual roots. Without either option, plain fetch.
 */
export function gigachatHttp({ caFile, insecureTls = false }: GigaChatTlsOptions = {}): GigaChatHttp {
  if (caFile === undefined && !insecureTls) return { fetch: (url, init) => fetch(url, init) };
  let ca: string[] | undefined;
  if (caFile !== undefined) {
    try {
      ca = [...rootCertificates, readFileSync(caFile, 'utf8')];
    } catch (error) {
      throw new AgentqError(
        'INVALID_INPUT',
        `GIGACHAT_CA_FILE '${caFile}' cannot be read: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
  }
  // undici is loaded by the first request, not by every worker's start (most never talk to GigaChat).
  let pool: Promise<{ send: typeof undiciFetch; dispatcher: import('undici').Dispatcher }> | undefined;
  return {
    async fetch(url, init) {
      pool ??= import('undici').then(({ Agent, fetch: send }) => ({
        send,
        dispatcher: new Agent({
          connect: { ...(ca ? { ca } : {}), ...(insecureTls ? { rejectUnauthorized: false } : {}) },
        }),
      }));
      const { send, dispatcher } = await pool;
      return (await send(url, { ...(init as Parameters<typeof undiciFetch>[1]), dispatcher })) as unknown as Response;
    },
  };
}
