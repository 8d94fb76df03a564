import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/config/config.js';
import { integer, text } from '../../shared/config/setting-builders.js';
import { readSettings } from '../../shared/config/settings-area.js';
import { AgentqError } from '../../shared/contracts/errors.js';

/** The message `loadConfig(env)` refuses `env` with. */
function refusal(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(AgentqError);
    expect((error as AgentqError).code).toBe('INVALID_INPUT');
    return (error as AgentqError).message;
  }
  throw new Error(`${JSON.stringify(env)} was accepted`);
}

const see = '(see docs/reference/configuration.md)';

describe('a refused setting names the variable, the value given and what is allowed', () => {
  it('words each kind of setting from its declaration', () => {
    expect(refusal({ AGENTQ_WORKER_CONCURRENCY: '0' })).toBe(
      `invalid configuration: AGENTQ_WORKER_CONCURRENCY: must be a whole number ≥ 1, got "0" ${see}`,
    );
    expect(refusal({ PORT: '70000' })).toBe(
      `invalid configuration: PORT: must be a whole number from 0 to 65535, got "70000" ${see}`,
    );
    expect(refusal({ AGENTQ_SUMMARIZE_AT: 'half' })).toBe(
      `invalid configuration: AGENTQ_SUMMARIZE_AT: must be a number from 0 to 1, got "half" ${see}`,
    );
    expect(refusal({ AGENTQ_LLM_STREAM: 'TRUE' })).toBe(
      `invalid configuration: AGENTQ_LLM_STREAM: must be true or false (or 1/0, yes/no), got "TRUE" ${see}`,
    );
    expect(refusal({ AGENTQ_LOG_LEVEL: 'loud' })).toBe(
      `invalid configuration: AGENTQ_LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent, got "loud" ${see}`,
    );
    expect(refusal({ OPENAI_BASE_URL: 'ollama host' })).toMatch(
      /^invalid configuration: OPENAI_BASE_URL: must be a URL such as http:\/\/localhost:11434\/v1, got "ollama host"/,
    );
  });

  it('names every bad variable at once, in the order of the reference page', () => {
    expect(refusal({ AGENTQ_WEBHOOK_CONCURRENCY: '0', AGENTQ_SHARDS: 'x', PORT: '-1' })).toBe(
      'invalid configuration: AGENTQ_SHARDS: must be a whole number from 1 to 1024 (the number of step-queue shards; 1 unless you run Redis Cluster), got "x"; ' +
        'PORT: must be a whole number from 0 to 65535, got "-1"; ' +
        `AGENTQ_WEBHOOK_CONCURRENCY: must be a whole number ≥ 1, got "0" ${see}`,
    );
  });

  it('masks a URL’s user and password, and never repeats a secret', () => {
    expect(refusal({ REDIS_URL: 'redis://admin:hunter2@[::1' })).toContain('got "redis://***@[::1"');
    expect(refusal({ REDIS_URL: 'redis://admin:hunter2@[::1' })).not.toContain('hunter2');
    const secret = { pin: integer({ env: 'PIN', min: 1000, secret: true, doc: 'A secret number.' }) };
    expect(readSettings(secret, { PIN: '12' }).problems).toEqual(['PIN: must be a whole number ≥ 1000']);
    expect(readSettings(secret, {}).values).toEqual({ pin: undefined });
  });

  it('gives an unset setting its default, and an optional one undefined', () => {
    const table = {
      name: text({ env: 'NAME', default: 'x', doc: 'A name.' }),
      count: integer({ env: 'COUNT', min: 0, doc: 'A count.' }),
    };
    expect(readSettings(table, {})).toEqual({ values: { name: 'x', count: undefined }, problems: [] });
    expect(readSettings(table, { NAME: 'y', COUNT: '1e3' })).toEqual({
      values: { name: 'y', count: 1000 },
      problems: [],
    });
  });
});
