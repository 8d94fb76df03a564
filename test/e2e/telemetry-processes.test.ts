import type { ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { AgentClient } from '../../producer/client/agent-client.js';
import { loadScaledMs } from '../helpers/load-scale.js';
import { eventually, testConfig } from '../helpers/test-env.js';
import { startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { killHard, spawnWorker } from '../helpers/worker-processes.js';

describe('a run traced across two worker processes', () => {
  const children: ChildProcess[] = [];
  afterAll(async () => {
    await Promise.all(children.map((child) => killHard(child)));
  });

  it('parents every step span to the run root span, whichever process ran it', async () => {
    const receiver = await startOtlpReceiver();
    const config = testConfig();
    const env = {
      REDIS_URL: config.redisUrl!,
      AGENTQ_KEY_PREFIX: config.keyPrefix,
      AGENTQ_QUEUE_PREFIX: config.queuePrefix,
      AGENTQ_LOG_LEVEL: 'error',
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: '100',
    };
    const client = new AgentClient({ config });
    try {
      const first = await spawnWorker('test/chaos/chain-worker.ts', env);
      children.push(first);
      const queued = await client.enqueue({ graph: 'chain', input: { steps: 6, sleepMs: 300 } });
      await eventually(
        async () => ((await client.get(queued.id))?.stepCount ?? 0) >= 2,
        loadScaledMs(20_000),
        'two steps in the first worker',
      );
      // A graceful stop leaves the rest of the run in the queue for the second process.
      first.kill('SIGTERM');
      await new Promise((resolve) => first.once('exit', resolve));
      expect((await client.get(queued.id))?.status).toBe('running');
      const second = await spawnWorker('test/chaos/chain-worker.ts', env);
      children.push(second);
      const done = await client.wait(queued.id, { timeoutMs: loadScaledMs(30_000) });
      expect(done.status).toBe('completed');
      second.kill('SIGTERM');
      await new Promise((resolve) => second.once('exit', resolve));

      const ofRun = receiver.spans.filter((span) => span.attributes['agentq.run.id'] === queued.id);
      const root = ofRun.filter((span) => span.name === 'agent.run chain');
      expect(root).toHaveLength(1);
      const steps = ofRun.filter((span) => span.name === 'agent.step step');
      expect(steps).toHaveLength(6);
      expect(new Set(steps.map((span) => span.resource['process.pid'])).size).toBe(2);
      for (const step of steps) {
        expect(step.traceId).toBe(root[0]!.traceId);
        expect(step.parentSpanId).toBe(root[0]!.spanId);
      }
    } finally {
      await client.close();
      await receiver.close();
    }
  });
});
