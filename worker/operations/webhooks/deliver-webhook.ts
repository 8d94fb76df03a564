import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { isPublicAddress } from '../../runtime/public-address.js';

/** The receiver's address is not public (and private ones are not allowed): retrying cannot help. */
export class WebhookAddressError extends Error {
  override readonly name = 'WebhookAddressError';
}

interface DeliverWebhookOptions {
  url: string;
  body: string;
  headers: Record<string, string>;
  /** Abort the attempt after this long. */
  timeoutMs: number;
  /** Deliver to loopback, private and link-local addresses too. */
  allowPrivate: boolean;
}

/**
 * POSTs one webhook and resolves with the receiver's status code. The address is checked after DNS
 * resolution, inside the connection's own lookup, so the address checked is the address connected to
 * (a second resolution cannot swap in a private one). Redirects are not followed.
 */
export function deliverWebhook({
  url,
  body,
  headers,
  timeoutMs,
  allowPrivate,
}: DeliverWebhookOptions): Promise<number> {
  const target = new URL(url);
  const hostname = target.hostname.replace(/^\[|\]$/g, '');
  // Node connects to an IP literal without calling `lookup`, so literals are checked here.
  if (!allowPrivate && isIP(hostname) !== 0 && !isPublicAddress(hostname)) {
    return Promise.reject(new WebhookAddressError(refusal(target.host, hostname)));
  }
  const options: RequestOptions = {
    method: 'POST',
    headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
    signal: AbortSignal.timeout(timeoutMs),
    ...(allowPrivate ? {} : { lookup: publicOnlyLookup(target.host) }),
  };
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<number>((resolve, reject) => {
    const outgoing = send(target, options, (response) => {
      // Drain the body (receivers' answers are not used) so the socket is released.
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
      response.on('error', reject);
    });
    outgoing.on('error', (error) =>
      reject(
        error.name === 'AbortError'
          ? new Error(`webhook receiver ${target.host} did not answer within ${timeoutMs} ms`)
          : error,
      ),
    );
    outgoing.end(body);
  });
}

function refusal(host: string, address: string): string {
  return `webhook host ${host} resolves to ${address}, a private, loopback or link-local address; refused (set AGENTQ_WEBHOOK_ALLOW_PRIVATE=true to allow)`;
}

/** A `lookup` for http.request that fails unless every address the name resolves to is public. */
function publicOnlyLookup(host: string): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      const blocked = addresses.find((entry) => !isPublicAddress(entry.address));
      if (blocked || addresses.length === 0) {
        return callback(new WebhookAddressError(refusal(host, blocked?.address ?? 'no address')), '', 0);
      }
      if (options.all)
        return (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, addresses);
      const [first] = addresses as [LookupAddress];
      callback(null, first.address, first.family);
    });
  };
}
