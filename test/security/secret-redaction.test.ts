import { createServer } from 'node:net';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { APIConnectionError } from 'openai';
import { beforeAll, describe, expect, it } from 'vitest';
import { AgentClient } from '../../producer/client/agent-client.js';
import { mapOpenAIError } from '../../shared/adapters/openai/openai-error.js';
import { AgentqError } from '../../shared/contracts/errors.js';
import { redactCredentials } from '../../shared/contracts/redact-credentials.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { createTestApi } from '../helpers/api-test-env.js';
import { atScale } from '../helpers/suite-scale.js';
import { testConfig } from '../helpers/test-env.js';

/**
 * Attack: call `GET /readyz` (no key needed) while Redis is unreachable, and read the
 * API's logs, hoping for the Redis password. Expected: 503 naming the target with `***` for its
 * credentials, and no log line, error body or error message of the client carries the password.
 */
const PASSWORD = `pw${randomBytes(8).toString('hex')}`;

/** A loopback port nothing listens on (bound, then closed): connections are refused at once. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A pino destination that keeps every line. */
function captureLines(): { stream: Writable; text(): string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}

describe('secrets never leave the process: health answers, error bodies, client errors and logs', () => {
  let redisUrl: string;
  beforeAll(async () => {
    redisUrl = `redis://agentq:${PASSWORD}@127.0.0.1:${await closedPort()}/0`;
  });

  it('GET /readyz with Redis unreachable: 503 names the target with *** for the password; no log line has it', async () => {
    const logs = captureLines();
    const app = await createTestApi(
      { REDIS_URL: redisUrl, AGENTQ_LOG_LEVEL: 'info', AGENTQ_REDIS_COMMAND_TIMEOUT_MS: '300' },
      { logger: createLogger('info', {}, logs.stream) },
    );
    try {
      const probes = atScale(3, 20);
      for (let probe = 0; probe < probes; probe += 1) {
        const response = await app.inject({ method: 'GET', url: '/readyz' });
        expect(response.statusCode).toBe(503);
        expect(response.body).not.toContain(PASSWORD);
        expect(JSON.parse(response.body)).toMatchObject({
          error: { code: 'UNAVAILABLE', message: expect.stringContaining('redis://***@127.0.0.1:') },
        });
      }
      // A keyed route fails the same way (503 from the rate-limit hook), also without the password.
      const keyed = await app.inject({ method: 'GET', url: '/v1/runs', headers: { authorization: 'Bearer x' } });
      expect(keyed.body).not.toContain(PASSWORD);
    } finally {
      await app.close();
    }
    await new Promise((resolve) => setTimeout(resolve, 50)); // pino's async destination flushes
    expect(logs.text()).toContain('Redis unavailable');
    expect(logs.text()).not.toContain(PASSWORD);
  });

  it("the client's error for an unreachable Redis has no password", async () => {
    const client = new AgentClient({
      config: testConfig({ REDIS_URL: redisUrl, AGENTQ_REDIS_COMMAND_TIMEOUT_MS: '200' }),
    });
    try {
      const error = await client.enqueue({ graph: 'chain', input: { steps: 1 } }).then(
        () => null,
        (thrown: unknown) => thrown as Error,
      );
      expect(error).toBeInstanceOf(Error);
      expect(error!.message).toContain('redis://***@');
      expect(error!.message).not.toContain(PASSWORD);
    } finally {
      await client.close();
    }
  });

  it("a model server URL's credentials stay out of the run's error (what its owner reads)", () => {
    const error = mapOpenAIError(
      new APIConnectionError({ message: 'Connection error.', cause: new Error('connect ECONNREFUSED') }),
      {
        baseURL: `http://user:${PASSWORD}@127.0.0.1:9/v1?api_key=${PASSWORD}`,
        model: 'm',
        timeoutMs: 1000,
        abortSignal: undefined,
        maxRetryAfterMs: 1000,
      },
    ) as AgentqError;
    expect(error.code).toBe('PROVIDER_ERROR');
    expect(error.toRecord().message).not.toContain(PASSWORD);
    // The run's owner reads no address at all; the operator's log (the cause) reads it without credentials.
    expect(error.message).toContain('the model server');
    expect(error.message).not.toContain('127.0.0.1');
    const cause = (error.cause as Error).message;
    expect(cause).toContain('http://***@127.0.0.1:9/v1?api_key=***');
    expect(cause).not.toContain(PASSWORD);
  });

  it('log lines: a message, a field, a nested field and an error that quote a URL with credentials', async () => {
    const logs = captureLines();
    const logger = createLogger('info', {}, logs.stream);
    const url = `rediss://default:${PASSWORD}@cache.example:6380`;
    logger.info(`connecting to ${url}`);
    logger.warn({ target: url, nested: { url } }, 'retrying');
    logger.error({ err: new Error(`Reached the max retries for ${url}`) }, 'gave up');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const text = logs.text();
    expect(text.split('\n').filter(Boolean)).toHaveLength(3);
    expect(text).not.toContain(PASSWORD);
    expect(text).toContain('rediss://***@cache.example:6380');
  });

  it('the helper: user info and credential parameters go, everything else stays', () => {
    expect(redactCredentials('redis://agentq:p%40ss@host:6399/0')).toBe('redis://***@host:6399/0');
    expect(redactCredentials('redis://:p@ss@host:6399')).toBe('redis://***@host:6399');
    expect(redactCredentials('https://q.example/x?token=abc&collection=y')).toBe(
      'https://q.example/x?token=***&collection=y',
    );
    expect(redactCredentials('Redis at redis://127.0.0.1:6379 is down; mail ops@example.com')).toBe(
      'Redis at redis://127.0.0.1:6379 is down; mail ops@example.com',
    );
  });
});
