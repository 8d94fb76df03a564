import { describe, expect, it } from 'vitest';
import { callbackEventName, signCallbackToken, verifyCallbackToken } from '../../shared/store/events/callback-token.js';

const SECRET = 'unit-callback-secret-0123456789abcdefgh';
const claims = { tenant: 'acme', runId: 'run-1', waitId: 's2.t0:1', expiresAt: 1_800_000_000_000 };

/** A callback token: deterministic (a step run again hands out the same URL), and only its signer's. */
describe('callback tokens', () => {
  it('the same claims and secret give the same token, and it reads back to them', () => {
    const token = signCallbackToken(claims, SECRET);
    expect(signCallbackToken({ ...claims }, SECRET)).toBe(token);
    expect(verifyCallbackToken(token, SECRET)).toEqual(claims);
    expect(signCallbackToken({ ...claims, waitId: 's2.t0:2' }, SECRET)).not.toBe(token);
  });

  it('an altered payload or signature, another secret, or a malformed token is CALLBACK_INVALID', () => {
    const token = signCallbackToken(claims, SECRET);
    const [payload, signature] = token.split('.') as [string, string];
    const otherRun = signCallbackToken({ ...claims, runId: 'run-2' }, SECRET).split('.')[0]!;
    const bad = [
      `${otherRun}.${signature}`,
      `${payload}.${signature.slice(0, -1)}${signature.endsWith('A') ? 'B' : 'A'}`,
      signCallbackToken(claims, 'another-secret-0123456789abcdefghijkl'),
      payload,
      `${token}.x`,
      '',
    ];
    for (const token of bad) expect(() => verifyCallbackToken(token, SECRET)).toThrow(/not one agentq signed/);
  });

  it('its wait listens for an event name made of the signature, which only the token holder knows', () => {
    const token = signCallbackToken(claims, SECRET);
    expect(callbackEventName(token)).toBe(`agentq.callback.${token.split('.')[1]}`);
  });
});
