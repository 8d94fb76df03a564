import { Writable } from 'node:stream';
import { Queue, type Job } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentClient } from '../../producer/client/agent-client.js';
import { SCHEDULES_QUEUE } from '../../shared/contracts/queues.js';
import { RunEnqueuer } from '../../shared/operations/runs/run-enqueuer.js';
import { RateLimiter } from '../../shared/operations/limits/rate-limiter.js';
import { Schedules, type ScheduleTickData } from '../../shared/operations/schedules/schedules.js';
import { StepQueues } from '../../shared/store/step-queues.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { ScheduleTickProcessor, SKIPPED_TICK_WARNING_MS } from '../../worker/operations/schedule-tick-processor.js';
import { testConfig } from '../helpers/test-env.js';

const KEY_ID = 'creatorkey000001';
const RATE = 5;

/**
 * A schedule's refused ticks (the tenant at its in-flight cap) start nothing: they cost the creator key
 * none of its per-minute budget, and they write one warning per schedule per interval, not one per tick.
 */
describe('schedule ticks refused by the admission', () => {
  const config = testConfig({ AGENTQ_RATE_LIMIT_PER_MINUTE: String(RATE), AGENTQ_TENANT_MAX_INFLIGHT: '1' });
  const client = new AgentClient({ config });
  const lines: { level: number; msg: string; skippedSinceLastWarning?: number }[] = [];
  const logger = createLogger(
    'debug',
    {},
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    }),
  );
  let queue: Queue;
  let stepQueues: StepQueues;
  let schedules: Schedules;
  let clock = Date.now();
  let processor: ScheduleTickProcessor;

  beforeAll(async () => {
    const connection = { url: config.redisUrl!, maxRetriesPerRequest: null };
    queue = new Queue(SCHEDULES_QUEUE, { connection, prefix: config.queuePrefix });
    stepQueues = new StepQueues(config.shards, config.queuePrefix, { connection });
    schedules = new Schedules({ redis: client.store.redis, keys: client.store.keys, queue });
    processor = new ScheduleTickProcessor({
      schedules,
      enqueuer: new RunEnqueuer(client.store, stepQueues, config),
      logger,
      now: () => clock,
    });
  });
  afterAll(async () => {
    await queue?.close();
    await stepQueues?.close();
    await client.close();
  });

  it('cost the creator key no rate budget and warn once per schedule per interval', async () => {
    // The tenant's one in-flight slot is taken by a run of its own; the schedule ticks every second.
    await client.enqueue({ graph: 'echo', input: { text: 'holds the slot' }, tenant: 'acme' });
    const schedule = await schedules.create(
      'acme',
      { graph: 'echo', input: { text: 'tick' }, everyMs: 1000, paused: true },
      { keyId: KEY_ID },
    );
    const tick = (at: number) =>
      processor.process({
        id: `repeat:${schedule.id}:${at}`,
        data: { tenant: 'acme', scheduleId: schedule.id },
      } as Job<ScheduleTickData>);
    // Paused at creation so no scheduler ticks on its own; the definition is what the processor reads.
    await client.store.redis.hset(
      client.store.keys.schedules('acme').definitions,
      schedule.id,
      JSON.stringify({ ...(await schedules.definition('acme', schedule.id))!, paused: false }),
    );
    const start = clock;
    const outcomes: string[] = [];
    for (let index = 0; index < 20; index += 1) {
      clock = start + index * 1000;
      outcomes.push(await tick(clock));
    }
    expect(new Set(outcomes)).toEqual(new Set(['skipped: RATE_LIMITED']));
    // The key's budget this minute is untouched: all RATE requests are still allowed.
    const limiter = new RateLimiter(client.store.redis, client.store.keys, RATE);
    const decision = await limiter.consume(KEY_ID, clock);
    expect(decision).toMatchObject({ allowed: true, remaining: RATE - 1 });
    await limiter.giveBack(KEY_ID, decision.window);

    const warnings = () => lines.filter((line) => line.level === 40 && line.msg.startsWith('schedule tick skipped'));
    expect(warnings()).toHaveLength(1);
    // Past the interval the next refusal warns again, counting the ticks skipped quietly.
    clock = start + SKIPPED_TICK_WARNING_MS + 1000;
    await tick(clock);
    expect(warnings()).toHaveLength(2);
    expect(warnings()[1]!.skippedSinceLastWarning).toBe(19);
  });
});
