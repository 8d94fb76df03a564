import { Writable } from 'node:stream';
import { ReplyError } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { toApiError } from '../../producer/api/errors.js';
import { asRedisFaultError, redisFaultOf } from '../../shared/redis/redis-fault.js';
import { topLevelStrings } from '../../shared/bullmq/oversized-job-data.js';
import { AgentqError } from '../../shared/contracts/errors.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { WarningGate } from '../../shared/telemetry/warning-gate.js';

const reply = (message: string): Error => new (ReplyError as new (message: string) => Error)(message);

describe('Redis faults (issue 34)', () => {
  it('tells a full or unavailable Redis from every other error, through causes', () => {
    expect(redisFaultOf(reply("OOM command not allowed when used memory > 'maxmemory'. script: 8f9c"))).toBe('full');
    expect(redisFaultOf(reply('EXECABORT Transaction discarded because of previous errors.'))).toBe('full');
    expect(redisFaultOf(reply("READONLY You can't write against a read only replica."))).toBe('unavailable');
    expect(redisFaultOf(reply('LOADING Redis is loading the dataset in memory'))).toBe('unavailable');
    expect(redisFaultOf(reply('MASTERDOWN Link with MASTER is down'))).toBe('unavailable');
    expect(redisFaultOf(new Error('Connection is closed.'))).toBe('unavailable');
    expect(redisFaultOf(new Error('wrapped', { cause: reply('OOM command not allowed') }))).toBe('full');
    // A model endpoint or a vector store that refuses connections is the step's failure: it spends attempts.
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
    expect(redisFaultOf(new Error('Connection error.', { cause: refused }))).toBeUndefined();
    expect(redisFaultOf(reply('ERR wrong number of arguments'))).toBeUndefined();
    expect(redisFaultOf(new AgentqError('PROVIDER_ERROR', 'HTTP 500'))).toBeUndefined();
  });

  it('producers and the API get REDIS_FULL with what to do, not the raw reply', () => {
    const error = asRedisFaultError(reply('OOM command not allowed. script: 8f9c'), 'enqueue the run');
    expect(error).toMatchObject({ code: 'REDIS_FULL', retryable: true });
    expect((error as Error).message).toMatch(/^Redis is full and refused to enqueue the run .*maxmemory/);
    const api = toApiError(reply('OOM command not allowed. script: 8f9c'));
    expect(api.statusCode).toBe(503);
    expect(api.toBody().error).toMatchObject({ code: 'REDIS_FULL', message: expect.stringContaining('maxmemory') });
    expect(toApiError(error).toBody().error.code).toBe('REDIS_FULL');
  });

  it('repeated warnings: one line per kind per interval, then one line with the count', async () => {
    const lines: { msg: string; repeated?: number }[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const gate = new WarningGate(createLogger('info', {}, sink), 60_000);
    for (let index = 0; index < 70; index += 1) gate.warn('oom', { index }, 'queue worker error (will retry)');
    gate.warn('other', {}, 'another kind');
    gate.flush();
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines.map((line) => [line.msg, line.repeated])).toEqual([
      ['queue worker error (will retry)', undefined],
      ['another kind', undefined],
      [expect.stringMatching(/^queue worker error \(will retry\) \(repeated 69 times in \d+ ms\)$/), 69],
    ]);
  });

  it('reads the top-level ids of an oversized job without parsing it (nested look-alikes ignored)', () => {
    const text = JSON.stringify({
      v: 1,
      input: { runId: 'nested-not-this', deep: [{ tenant: 'no' }] },
      runId: 'run-1',
      tenant: 'acme',
      graph: 'chain',
      idempotencyKey: 'x'.repeat(200),
    });
    const names = new Set(['runId', 'tenant', 'graph', 'idempotencyKey']);
    expect(topLevelStrings(text, names)).toEqual({ runId: 'run-1', tenant: 'acme', graph: 'chain' });
    expect(topLevelStrings('{"runId":"a\\"b","graph":"g"}', names)).toEqual({ graph: 'g' });
    expect(topLevelStrings('not json', names)).toEqual({});
  });
});
