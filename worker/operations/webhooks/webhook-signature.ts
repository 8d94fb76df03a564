import { createHmac, timingSafeEqual } from 'node:crypto';

/** Header with `sha256=<hex>`: HMAC-SHA256 with the tenant's secret over `<timestamp>.<raw body>`. */
export const SIGNATURE_HEADER = 'x-agentq-signature';
/** Header with the Unix time (seconds) of the delivery attempt; it is part of what is signed. */
export const TIMESTAMP_HEADER = 'x-agentq-timestamp';

/**
 * The signature header value for one delivery. The timestamp is signed with the body so a receiver can
 * refuse replays of an old delivery (see `verifyWebhookSignature`'s tolerance).
 */
export function signWebhook(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

export interface VerifyWebhookOptions {
  secret: string;
  /** The raw request body, exactly as received. */
  body: string;
  /** The `X-Agentq-Timestamp` header. */
  timestamp: string | undefined;
  /** The `X-Agentq-Signature` header. */
  signature: string | undefined;
  /** Refuse deliveries signed longer ago than this. @default 300 */
  toleranceSeconds?: number;
  /** @default Date.now() */
  now?: number;
}

/** For receivers (and tests): true when the delivery is signed with `secret` and recent enough. */
export function verifyWebhookSignature({
  secret,
  body,
  timestamp,
  signature,
  toleranceSeconds = 300,
  now = Date.now(),
}: VerifyWebhookOptions): boolean {
  const seconds = Number(timestamp);
  if (!timestamp || !Number.isInteger(seconds) || !signature) return false;
  if (Math.abs(now / 1000 - seconds) > toleranceSeconds) return false;
  const expected = Buffer.from(signWebhook(secret, seconds, body));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
