import { randomUUID } from 'node:crypto';
import { AgentqError } from '../../contracts/errors.js';
import { gigachatFetchError, gigachatHttpError, type GigaChatErrorContext } from './gigachat-error.js';
import type { GigaChatHttp } from './gigachat-http.js';

export interface GigaChatTokensOptions {
  /** The OAuth endpoint (GIGACHAT_AUTH_URL). */
  authUrl: string;
  /** The authorization key, sent as `Authorization: Basic <key>` (GIGACHAT_AUTH_KEY). */
  authKey: string;
  /** GIGACHAT_API_PERS, GIGACHAT_API_B2B or GIGACHAT_API_CORP. */
  scope: string;
  http: GigaChatHttp;
  /** A token this close to its expiry is renewed before use, so none expires on the way. @default 60000 */
  refreshMarginMs?: number;
  /** Per OAuth request. @default 60000 */
  timeoutMs?: number;
  /** @default Date.now */
  now?: () => number;
}

interface HeldToken {
  value: string;
  expiresAt: number;
}

/**
 * GigaChat's access tokens (OAuth client credentials; each lives 30 minutes): one is held and shared by
 * every request of the model, renewed when it comes within the margin of its expiry or when the API
 * refuses it. Requests that need a token while one is being fetched wait for that one.
 */
export class GigaChatTokens {
  private held: HeldToken | undefined;
  private pending: Promise<HeldToken> | undefined;
  private readonly refreshMarginMs: number;
  private readonly timeoutMs: number;
  private readonly now: () => number;

  constructor(private readonly options: GigaChatTokensOptions) {
    this.refreshMarginMs = options.refreshMarginMs ?? 60_000;
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.now = options.now ?? Date.now;
  }

  /**
   * A token valid for at least the margin. The fetch is shared, so it runs on its own timeout rather
   * than on the first caller's signal; each caller stops waiting when its own signal aborts.
   */
  async token(signal?: AbortSignal): Promise<string> {
    if (this.held && this.held.expiresAt - this.refreshMarginMs > this.now()) return this.held.value;
    this.pending ??= this.fetchToken().finally(() => (this.pending = undefined));
    this.held = await untilAborted(this.pending, signal);
    return this.held.value;
  }

  /** The API refused `token`: it is not used again (a newer one another request fetched stays). */
  invalidate(token: string): void {
    if (this.held?.value === token) this.held = undefined;
  }

  private async fetchToken(): Promise<HeldToken> {
    const { authUrl, authKey, scope, http } = this.options;
    const context: GigaChatErrorContext = {
      endpoint: 'oauth',
      url: authUrl,
      model: '',
      timeoutMs: this.timeoutMs,
      maxRetryAfterMs: 600_000,
    };
    const timeout = AbortSignal.timeout(this.timeoutMs);
    let response: Response;
    let text: string;
    try {
      response = await http.fetch(authUrl, {
        method: 'POST',
        headers: {
          authorization: `Basic ${authKey}`,
          rquid: randomUUID(),
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: new URLSearchParams({ scope }).toString(),
        signal: timeout,
      });
      text = await response.text();
    } catch (error) {
      throw gigachatFetchError(error, { timedOut: timeout.aborted, context });
    }
    if (!response.ok) throw gigachatHttpError(response.status, text, response.headers, context);
    const body = parseToken(text);
    // The reference gives expires_at in milliseconds; a value in seconds would otherwise look long expired.
    const expiresAt = body.expires_at < 1e12 ? body.expires_at * 1000 : body.expires_at;
    return { value: body.access_token, expiresAt };
  }
}

/** `promise`, or the signal's reason as soon as it aborts (the promise goes on for its other waiters). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  const reasonOf = () =>
    signal.reason instanceof Error ? signal.reason : new AgentqError('CANCELLED', 'the model request was aborted');
  if (signal.aborted) return Promise.reject(reasonOf());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(reasonOf());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function parseToken(text: string): { access_token: string; expires_at: number } {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const token = body as { access_token?: unknown; expires_at?: unknown } | undefined;
  if (typeof token?.access_token !== 'string' || token.access_token === '' || typeof token.expires_at !== 'number')
    throw new AgentqError(
      'PROVIDER_ERROR',
      "GigaChat's OAuth endpoint answered without an access_token and expires_at (check GIGACHAT_AUTH_URL)",
      { retryable: true },
    );
  return { access_token: token.access_token, expires_at: token.expires_at };
}
