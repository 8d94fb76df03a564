import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/config/config.js';

/** The lock settings' rules: refused at start, with the setting to change named. */
describe('config: job locks', () => {
  it('defaults: a held lock of 3 s renewed by the liveness thread, a take lock of 30 s', () => {
    const config = loadConfig({});
    expect(config.lockDurationMs).toBe(3000);
    expect(config.takeLockMs).toBe(30_000);
  });

  it('refuses a take lock shorter than the held lock', () => {
    expect(() => loadConfig({ AGENTQ_LOCK_DURATION_MS: '5000', AGENTQ_TAKE_LOCK_MS: '4000' })).toThrow(
      /AGENTQ_TAKE_LOCK_MS \(4000\) must be at least AGENTQ_LOCK_DURATION_MS \(5000\)/,
    );
    expect(loadConfig({ AGENTQ_LOCK_DURATION_MS: '5000', AGENTQ_TAKE_LOCK_MS: '5000' }).takeLockMs).toBe(5000);
  });

  it('refuses a held lock shorter than two liveness beats', () => {
    expect(() => loadConfig({ AGENTQ_LOCK_DURATION_MS: '1500', AGENTQ_LIVENESS_INTERVAL_MS: '1000' })).toThrow(
      /AGENTQ_LOCK_DURATION_MS \(1500\) must be at least twice AGENTQ_LIVENESS_INTERVAL_MS/,
    );
  });
});
