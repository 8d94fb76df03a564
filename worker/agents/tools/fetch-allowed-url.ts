import { Buffer } from 'node:buffer';
import type { LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Readable } from 'node:stream';
import { AgentqError } from '../../../shared/contracts/errors.js';
import { isPublicAddress, resolveHost as defaultResolve, type ResolveHost } from '../../runtime/public-address.js';

export type { ResolveHost } from '../../runtime/public-address.js';

export interface FetchAllowedUrlOptions {
  /** Host names that may be fetched; `*.example.com` allows any subdomain (not the apex itself). */
  allowHosts: readonly string[];
  /** At most this many bytes of the body are read (after decompression); the rest is cut. */
  maxBytes: number;
  /** For the whole fetch, redirects included. */
  timeoutMs: number;
  /** Redirects followed, each one checked again. @default 5 */
  maxRedirects?: number;
  /** DNS resolution (tests inject one: this machine has no outside network). @default node:dns lookup */
  resolve?: ResolveHost;
  /** Whether a resolved address may be connected to. @default isPublicAddress (no private, loopback, link-local…) */
  isAllowedAddress?: (address: string) => boolean;
  /** The step's signal. @default none */
  abortSignal?: AbortSignal;
}

export interface FetchedResponse {
  /** The final URL, after redirects. */
  url: string;
  status: number;
  /** The `content-type` header, lower-cased ('' when absent). */
  contentType: string;
  body: Buffer;
  /** The body was longer than `maxBytes` and was cut. */
  truncated: boolean;
  /** URLs redirected through, in order. */
  redirects: string[];
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** A refusal: the URL, its host or its address is not allowed. Never retried. */
function refused(message: string): AgentqError {
  return new AgentqError('TOOL_ERROR', message);
}

/** True when `hostname` is on the allowlist (exactly, or under a `*.` entry). */
export function isAllowedHost(hostname: string, allowHosts: readonly string[]): boolean {
  const host = hostname
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
  return allowHosts.some((entry) => {
    const allowed = entry.toLowerCase().replace(/^\[|\]$/g, '');
    return allowed.startsWith('*.')
      ? host.endsWith(allowed.slice(1)) && host.length > allowed.length - 1
      : host === allowed;
  });
}

/**
 * GETs a URL the way a tool used by a model must: only http(s), only allowlisted hosts, and never a
 * private, loopback or link-local address — checked after DNS resolution, inside the connection's own
 * `lookup`, so the address checked is the address connected to (no second resolution can swap one in),
 * and again for every redirect, which is followed here hop by hop (Node's `fetch` ignores a custom
 * lookup). IP literals are checked before any connection, since Node connects to them without a lookup.
 * Size and time are capped.
 */
export async function fetchAllowedUrl(url: string, options: FetchAllowedUrlOptions): Promise<FetchedResponse> {
  const { maxRedirects = 5, timeoutMs } = options;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = options.abortSignal ? AbortSignal.any([options.abortSignal, timeout]) : timeout;
  const redirects: string[] = [];
  let current = parseUrl(url);
  for (let hop = 0; ; hop += 1) {
    checkTarget(current, options);
    let response: IncomingMessage;
    try {
      response = await get(current, options, signal);
    } catch (error) {
      throw failure(error, current, signal, timeout, timeoutMs);
    }
    const status = response.statusCode ?? 0;
    const location = response.headers.location;
    if (REDIRECT_STATUSES.has(status) && location) {
      response.destroy();
      if (hop >= maxRedirects)
        throw refused(`${url} redirected more than ${maxRedirects} times; stopped at ${current.href}`);
      redirects.push(current.href);
      current = parseUrl(location, current);
      continue;
    }
    try {
      const { body, truncated } = await readBody(response, options.maxBytes);
      return {
        url: current.href,
        status,
        contentType: String(response.headers['content-type'] ?? '').toLowerCase(),
        body,
        truncated,
        redirects,
      };
    } catch (error) {
      throw failure(error, current, signal, timeout, timeoutMs);
    }
  }
}

function parseUrl(text: string, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(text, base);
  } catch {
    throw refused(`'${text.slice(0, 200)}' is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw refused(`${url.href.slice(0, 200)}: only http:// and https:// URLs can be fetched`);
  if (url.username || url.password) throw refused(`${url.host}: URLs with credentials are not fetched`);
  return url;
}

function checkTarget(url: URL, { allowHosts, isAllowedAddress = isPublicAddress }: FetchAllowedUrlOptions): void {
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  if (!isAllowedHost(hostname, allowHosts)) {
    throw refused(
      `host ${url.hostname} is not on the allowlist (AGENTQ_HTTP_FETCH_ALLOW_HOSTS: ${allowHosts.join(', ') || 'empty'})`,
    );
  }
  if (isIP(hostname) !== 0 && !isAllowedAddress(hostname)) throw refused(addressRefusal(url.hostname, hostname));
}

function addressRefusal(host: string, address: string): string {
  return `host ${host} resolves to ${address}, a private, loopback or link-local address; refused before connecting`;
}

/** A `lookup` for http.request that fails unless every address the name resolves to is allowed. */
function checkingLookup({
  resolve = defaultResolve,
  isAllowedAddress = isPublicAddress,
}: FetchAllowedUrlOptions): LookupFunction {
  return (hostname, lookupOptions, callback) => {
    resolve(hostname).then(
      (addresses) => {
        const family = lookupOptions.family === 4 || lookupOptions.family === 6 ? lookupOptions.family : undefined;
        const candidates = family ? addresses.filter((entry) => entry.family === family) : addresses;
        // Every address must pass, not just the first: the connection may try any of them.
        const blocked = candidates.find((entry) => !isAllowedAddress(entry.address));
        if (blocked || candidates.length === 0)
          return callback(
            refused(blocked ? addressRefusal(hostname, blocked.address) : `host ${hostname} has no address`),
            '',
            0,
          );
        if (lookupOptions.all)
          return (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, candidates);
        const [first] = candidates as [LookupAddress];
        callback(null, first.address, first.family);
      },
      (error: Error) =>
        callback(refused(`host ${hostname} could not be resolved (${error.message})`) as NodeJS.ErrnoException, '', 0),
    );
  };
}

function get(url: URL, options: FetchAllowedUrlOptions, signal: AbortSignal): Promise<IncomingMessage> {
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const outgoing = send(
      url,
      {
        method: 'GET',
        signal,
        lookup: checkingLookup(options),
        // No connection reuse: every hop gets its own socket, resolved and checked again.
        agent: false,
        headers: {
          'user-agent': 'agentq-http-fetch/1',
          accept: 'text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.5',
          'accept-encoding': 'gzip, deflate, br',
        },
      },
      resolve,
    );
    outgoing.on('error', reject);
    outgoing.end();
  });
}

async function readBody(response: IncomingMessage, maxBytes: number): Promise<{ body: Buffer; truncated: boolean }> {
  const encoding = String(response.headers['content-encoding'] ?? '')
    .toLowerCase()
    .trim();
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? createGunzip()
      : encoding === 'deflate'
        ? createInflate()
        : encoding === 'br'
          ? createBrotliDecompress()
          : undefined;
  const stream: Readable = decoder ? response.pipe(decoder) : response;
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  try {
    for await (const chunk of stream) {
      const buffer = chunk as Buffer;
      if (size + buffer.length > maxBytes) {
        chunks.push(buffer.subarray(0, maxBytes - size));
        size = maxBytes;
        truncated = true;
        break;
      }
      chunks.push(buffer);
      size += buffer.length;
    }
  } finally {
    // Stop reading (and decompressing) as soon as the cap is reached.
    response.destroy();
    decoder?.destroy();
  }
  return { body: Buffer.concat(chunks, size), truncated };
}

function failure(error: unknown, url: URL, signal: AbortSignal, timeout: AbortSignal, timeoutMs: number): unknown {
  if (AgentqError.isInstance(error)) return error;
  if (timeout.aborted)
    return new AgentqError(
      'TOOL_ERROR',
      `${url.href} did not answer within ${timeoutMs} ms (AGENTQ_HTTP_FETCH_TIMEOUT_MS)`,
    );
  // The step's own abort (cancellation, shutdown) carries its reason.
  if (signal.aborted) return signal.reason instanceof Error ? signal.reason : error;
  // A refusal raised inside the lookup reaches us wrapped by the socket: surface it as it was.
  const cause = (error as { cause?: unknown }).cause;
  if (AgentqError.isInstance(cause)) return cause;
  return new AgentqError('TOOL_ERROR', `could not fetch ${url.href}: ${(error as Error).message}`, {
    retryable: true,
    cause: error,
  });
}
