import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadConfig } from '../../shared/config/config.js';
import { expectReaderMatchesZod, readOutcome } from '../helpers/env-reader-parity.js';
import { ID_PATTERN } from '../../shared/contracts/ids.js';
import { readRedisConfig, REDIS_ENV_NAMES, type RedisConfig } from '../../shared/config/redis-config.js';

/**
 * The zod schemas these variables had in shared/config/config.ts before they were read without zod (the CLI's cold
 * start): the reference for which values are accepted and what each gives (the refusals' words
 * are now the declarations' own, shared/config/settings/redis.ts).
 */
const shardsMessage =
  'AGENTQ_SHARDS must be a whole number from 1 to 1024 (the number of step-queue shards; 1 unless you run Redis Cluster)';
const zodSchemas: Record<string, z.ZodType> = {
  REDIS_URL: z.string().url().optional(),
  AGENTQ_QUEUE_PREFIX: z
    .string()
    .min(1)
    .regex(/^[^:]+$/, 'must not contain ":"')
    .default('bull'),
  AGENTQ_KEY_PREFIX: z
    .string()
    .min(1)
    .regex(/^[^:{}]+$/, 'must not contain ":", "{" or "}"')
    .default('agentq'),
  AGENTQ_TENANT: z.string().regex(ID_PATTERN).default('default'),
  AGENTQ_RETENTION_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .default(7 * 24 * 3600),
  AGENTQ_EVENTS_MAXLEN: z.coerce.number().int().min(10).default(1000),
  AGENTQ_TOKEN_LOG_MAXLEN: z.coerce.number().int().min(10).default(2000),
  AGENTQ_TOKEN_LOG_TTL_MS: z.coerce.number().int().min(1000).default(900_000),
  AGENTQ_EVENT_WINDOW_MS: z.coerce.number().int().min(0).default(3_600_000),
  AGENTQ_SHARDS: z.coerce
    .number({ error: shardsMessage })
    .int(shardsMessage)
    .min(1, 'AGENTQ_SHARDS must be at least 1 (set 1 unless you run Redis Cluster)')
    .max(1024, 'AGENTQ_SHARDS must be at most 1024')
    .default(1),
  AGENTQ_REDIS_COMMAND_TIMEOUT_MS: z.coerce.number().int().min(50).default(750),
  // Declared with the run store's layout, read by the same readers.
  AGENTQ_RECORDING: z.enum(['full', 'steps', 'off']).default('full'),
  AGENTQ_RECORDING_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(1024 * 1024),
};

const numbers = [
  '0',
  '-0',
  '1',
  '9',
  '10',
  '49',
  '50',
  '1024',
  '1025',
  '-1',
  '0.5',
  '-0.5',
  '1e-7',
  '5.0',
  '2.5e1',
  '1e3',
  '0x10',
  '0b11',
  '+5',
  '5 ',
  ' ',
  '\t',
  'abc',
  '1_000',
  'true',
  'Infinity',
  '-Infinity',
  '1e400',
  '99999999999999999999',
  '-99999999999999999999',
];
const values: Record<string, string[]> = {
  REDIS_URL: [
    'redis://127.0.0.1:6379',
    ' redis://host:1/2 ',
    'rediss://user:pass@host',
    'redis://a\tb',
    'localhost:6379',
    'redis:',
    'not a url',
    'redis//x',
    'http://[::1',
    '/tmp/redis.sock',
  ],
  AGENTQ_QUEUE_PREFIX: ['bull', '{agentq}', 'a:b', ':', ' '],
  AGENTQ_KEY_PREFIX: ['agentq', 'a:b', 'a{b', 'b}', 'x y'],
  AGENTQ_TENANT: ['default', 'acme-1.2_x', 'a b', 'x'.repeat(128), 'x'.repeat(129), 'é'],
  AGENTQ_RETENTION_SECONDS: numbers,
  AGENTQ_EVENTS_MAXLEN: numbers,
  AGENTQ_TOKEN_LOG_MAXLEN: numbers,
  AGENTQ_TOKEN_LOG_TTL_MS: [...numbers, '999', '1000'],
  AGENTQ_EVENT_WINDOW_MS: numbers,
  AGENTQ_SHARDS: numbers,
  AGENTQ_REDIS_COMMAND_TIMEOUT_MS: numbers,
  AGENTQ_RECORDING: ['full', 'steps', 'off', 'OFF', 'none', ' full'],
  AGENTQ_RECORDING_MAX_BYTES: [...numbers, '1023', '1024', '1048576'],
};

const configKeys: Record<string, keyof RedisConfig> = {
  REDIS_URL: 'redisUrl',
  AGENTQ_QUEUE_PREFIX: 'queuePrefix',
  AGENTQ_KEY_PREFIX: 'keyPrefix',
  AGENTQ_TENANT: 'tenant',
  AGENTQ_RETENTION_SECONDS: 'retentionSeconds',
  AGENTQ_EVENTS_MAXLEN: 'eventsMaxLen',
  AGENTQ_TOKEN_LOG_MAXLEN: 'tokenLogMaxLen',
  AGENTQ_TOKEN_LOG_TTL_MS: 'tokenLogTtlMs',
  AGENTQ_EVENT_WINDOW_MS: 'eventWindowMs',
  AGENTQ_SHARDS: 'shards',
  AGENTQ_REDIS_COMMAND_TIMEOUT_MS: 'redisCommandTimeoutMs',
  AGENTQ_RECORDING: 'recording',
  AGENTQ_RECORDING_MAX_BYTES: 'recordingMaxBytes',
};

describe('the Redis settings, read without zod', () => {
  it('reads each of its variables as the zod schema did: the same value, or a refusal naming the value', () => {
    const refusals = expectReaderMatchesZod({
      values,
      zodSchemas,
      configKeys,
      light: readRedisConfig,
      full: loadConfig,
    });
    expect(refusals).toBeGreaterThan(40);
    expect(Object.keys(values).sort()).toEqual(REDIS_ENV_NAMES.filter((name) => name !== 'REDIS_CLUSTER_NODES').sort());
  });

  it('names every bad Redis setting at once, as the full configuration does', () => {
    const env = { AGENTQ_TENANT: 'a b', AGENTQ_SHARDS: '0', AGENTQ_EVENTS_MAXLEN: 'x' };
    const light = readOutcome(() => readRedisConfig(env), configKeys['AGENTQ_TENANT']!);
    expect(light).toEqual({
      code: 'INVALID_INPUT',
      message:
        'invalid configuration: AGENTQ_TENANT: must be 1-128 letters, digits, \'_\', \'.\' or \'-\', got "a b"; AGENTQ_EVENTS_MAXLEN: must be a whole number ≥ 10, got "x"; AGENTQ_SHARDS: must be a whole number from 1 to 1024 (the number of step-queue shards; 1 unless you run Redis Cluster), got "0" (see docs/reference/configuration.md)',
    });
    expect(readOutcome(() => loadConfig(env), configKeys['AGENTQ_TENANT']!)).toEqual(light);
  });

  it('has the full configuration’s defaults, and treats an empty variable as unset', () => {
    const full = loadConfig({});
    const light = readRedisConfig({ REDIS_URL: '', AGENTQ_SHARDS: '' });
    for (const key of Object.values(configKeys)) expect(light[key], key).toEqual(full[key]);
    expect(light.redisClusterNodes).toBeUndefined();
  });

  it('refuses the cluster settings the full configuration refuses, with the same message', () => {
    for (const env of [
      { REDIS_CLUSTER_NODES: '10.0.0.1:7000,10.0.0.2' },
      { REDIS_CLUSTER_NODES: ' , ', AGENTQ_QUEUE_PREFIX: '{agentq}' },
      { REDIS_URL: 'redis://127.0.0.1:6379', REDIS_CLUSTER_NODES: '127.0.0.1:7000', AGENTQ_QUEUE_PREFIX: '{agentq}' },
      { REDIS_CLUSTER_NODES: '127.0.0.1:7000' },
    ]) {
      const light = readOutcome(() => readRedisConfig(env), configKeys['REDIS_URL']!);
      expect(light, JSON.stringify(env)).toMatchObject({ code: 'INVALID_INPUT' });
      expect(readOutcome(() => loadConfig(env), configKeys['REDIS_URL']!)).toEqual(light);
    }
    const cluster = readRedisConfig({
      REDIS_CLUSTER_NODES: '127.0.0.1:7000,[::1]:7001',
      AGENTQ_QUEUE_PREFIX: '{agentq}',
    });
    expect(cluster.redisClusterNodes).toEqual([
      { host: '127.0.0.1', port: 7000 },
      { host: '::1', port: 7001 },
    ]);
    expect(cluster.redisUrl).toBeUndefined();
  });

  it('reads only the Redis settings: a bad setting of another part stops the full configuration, not this', () => {
    const env = {
      REDIS_URL: 'redis://127.0.0.1:7450',
      AGENTQ_PRICES: 'not a price table',
      AGENTQ_WORKER_CONCURRENCY: '0',
    };
    expect(readRedisConfig(env).redisUrl).toBe('redis://127.0.0.1:7450');
    expect(() => loadConfig(env)).toThrow(
      /AGENTQ_PRICES: .*AGENTQ_WORKER_CONCURRENCY|AGENTQ_WORKER_CONCURRENCY: .*AGENTQ_PRICES/,
    );
  });
});
