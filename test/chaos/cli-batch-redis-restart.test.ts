import { describe, expect, it } from 'vitest';
import { loadScaledMs } from '../helpers/load-scale.js';
import { batchAcrossRedisRestart } from './cli-batch-restart.js';

const QUESTIONS = 16;

/**
 * `agentq batch` (the built CLI) while its Redis is shut down and started again on the same data. It
 * rides the restart out as `wait` and `events` do, writes every answer and exits 0; when Redis does not
 * come back within --outage-ms it exits 1 with a line naming the batch and how to pick it up again.
 * Each CLI is killed if it has not exited after a generous bound: the assertions are on its exit.
 */
describe('agentq batch across a Redis restart', () => {
  it('rides out a 5 s restart: exits 0 and writes every answer', async () => {
    const outcome = await batchAcrossRedisRestart({ questions: QUESTIONS, killAfterMs: loadScaledMs(90_000) });
    console.log(`agentq batch across a 5 s Redis restart: exit ${outcome.code}, ${outcome.seconds.toFixed(1)} s`);
    expect(outcome.killed, `the CLI never exited; its stderr:\n${outcome.stderr}`).toBe(false);
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(JSON.parse(outcome.stdout)).toMatchObject({ status: 'completed', progress: { completed: QUESTIONS } });
    expect(outcome.answers?.map((answer) => [answer.id, answer.status, answer.answer])).toEqual(
      Array.from({ length: QUESTIONS }, (_, index) => [`q${index}`, 'completed', `echo: slow ${index}`]),
    );
    expect(outcome.stderr).not.toMatch(/Unhandled error event/);
  });

  it('gives up when Redis stays down past --outage-ms: exit 1, one line naming the batch and how to pick it up', async () => {
    const outcome = await batchAcrossRedisRestart({
      questions: QUESTIONS,
      killAfterMs: loadScaledMs(60_000),
      neverBack: true,
      cliArgs: ['--outage-ms', '3000'],
    });
    expect(outcome.killed, `the CLI never exited; its stderr:\n${outcome.stderr}`).toBe(false);
    expect(outcome.code).toBe(1);
    expect(outcome.answers).toBeNull();
    const batchId = /batch (bat_\w+): \d+ questions/.exec(outcome.stderr)?.[1];
    expect(batchId, outcome.stderr).toBeDefined();
    const last = outcome.stderr.trim().split('\n').at(-1)!;
    expect(last).toMatch(
      /^agentq: UNAVAILABLE: batch bat_\w+: Redis at redis:\/\/127\.0\.0\.1:\d+ did not answer for 3000 ms/,
    );
    expect(last).toContain(`agentq batch status ${batchId}`);
  });
});
