import { createHmac, timingSafeEqual } from 'node:crypto';
import { AgentqError } from '../../contracts/errors.js';

/** What a callback token carries: whose wait it completes, and until when. */
export interface CallbackClaims {
  tenant: string;
  runId: string;
  /** The wait it completes (`s3.t0:1`). */
  waitId: string;
  /** When it stops working (ms since the epoch). */
  expiresAt: number;
}

/** Bound into every signature, so a signature made for something else with the same secret never fits. */
const PURPOSE = 'agentq-callback-v1.';

/**
 * A signed callback token: `<payload>.<signature>`, both base64url, the payload JSON of the claims in a
 * fixed field order. Deterministic: the same claims and secret give the same token, so a step run again
 * after a crash hands out the URL it handed out before.
 */
export function signCallbackToken(claims: CallbackClaims, secret: string): string {
  const payload = Buffer.from(JSON.stringify([claims.tenant, claims.runId, claims.waitId, claims.expiresAt])).toString(
    'base64url',
  );
  return `${payload}.${signatureOf(payload, secret)}`;
}

/**
 * The claims of a token signed with `secret` (compared in constant time), or throws CALLBACK_INVALID.
 * Expiry is the caller's to judge (it answers its own code).
 */
export function verifyCallbackToken(token: string, secret: string): CallbackClaims {
  const [payload, signature, extra] = token.split('.');
  if (payload && signature && extra === undefined) {
    const expected = Buffer.from(signatureOf(payload, secret));
    const given = Buffer.from(signature);
    if (given.length === expected.length && timingSafeEqual(given, expected)) {
      const claims = parseClaims(payload);
      if (claims) return claims;
    }
  }
  throw new AgentqError('CALLBACK_INVALID', 'the callback URL is not one agentq signed (altered, or another secret)');
}

/** The event name a callback's wait listens for: the token's own signature, which only the token's holder knows. */
export function callbackEventName(token: string): string {
  return `agentq.callback.${token.slice(token.indexOf('.') + 1)}`;
}

function signatureOf(payload: string, secret: string): string {
  return createHmac('sha256', secret)
    .update(PURPOSE + payload)
    .digest('base64url');
}

function parseClaims(payload: string): CallbackClaims | null {
  try {
    const [tenant, runId, waitId, expiresAt] = JSON.parse(Buffer.from(payload, 'base64url').toString()) as unknown[];
    if (typeof tenant !== 'string' || typeof runId !== 'string' || typeof waitId !== 'string') return null;
    if (typeof expiresAt !== 'number' || !Number.isFinite(expiresAt)) return null;
    return { tenant, runId, waitId, expiresAt };
  } catch {
    return null;
  }
}
