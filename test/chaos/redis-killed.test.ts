import { afterAll, describe, expect, it } from 'vitest';
import { AgentClient } from '../../producer/client/agent-client.js';
import { isTerminal, type RunRecord } from '../../shared/contracts/run-record.js';
import { atScale, suiteSeed } from '../helpers/suite-scale.js';
import { recordFigure } from '../helpers/suite-figures.js';
import { eventually, testConfig } from '../helpers/test-env.js';
import { startRestartableRedis, type RestartableRedis } from './redis-restartable.js';
import { auditChainRuns, firstAfterOutage } from './redis-run-audit.js';
import { startWorkerFleet, type WorkerFleet } from './redis-worker-fleet.js';

type Fault = 'kill' | 'shutdown';

const SCENARIO = 'redis killed';
const RUNS = atScale(20, 100);
const STEPS = atScale(30, 60);
const SLEEP_MS = atScale(300, 1000);
// The three SIGKILLs and one graceful SHUTDOWN; the fast subset does one of each.
const FAULTS: Fault[] = atScale(['kill', 'shutdown'], ['kill', 'kill', 'shutdown', 'kill']);
const WORKERS = 2;
/** How long Redis stays down: long enough for every connection to notice and start reconnecting. */
const OUTAGE_MS = 1000;
const RESUME_GOAL_MS = 5000;
const STALL_MS = 2 * RESUME_GOAL_MS;

/**
 * Scenario 2 of the fault suite: Redis (AOF on, appendfsync everysec) is SIGKILLed and restarted on
 * the same port and directory, and once shut down gracefully, while chain runs are in flight on real
 * worker processes. Every run must complete with each step committed exactly once, no worker may
 * exit or log an unhandled rejection, and consumption must resume within 5 s of Redis answering.
 */
describe('chaos: Redis killed and restarted under in-flight runs', () => {
  let redis: RestartableRedis | undefined;
  let fleet: WorkerFleet | undefined;
  let client: AgentClient | undefined;
  afterAll(async () => {
    await fleet?.close();
    await client?.close();
    await redis?.close();
  });

  it(
    `${RUNS} runs complete exactly once per step across ${FAULTS.length} Redis outages`,
    async () => {
      const seed = suiteSeed();
      console.log(
        `${SCENARIO}: seed=${seed} (AGENTQ_SEED=${seed} reuses the run ids), ${RUNS} runs × ${STEPS} steps, faults ${FAULTS.join(', ')}`,
      );
      redis = await startRestartableRedis();
      const config = testConfig({ REDIS_URL: redis.url, AGENTQ_EVENTS_MAXLEN: '100000' });
      const env: Record<string, string> = {
        REDIS_URL: redis.url,
        AGENTQ_KEY_PREFIX: config.keyPrefix,
        AGENTQ_QUEUE_PREFIX: config.queuePrefix,
        // Every run can have its step active in either worker, so all of them are in flight at each fault.
        AGENTQ_WORKER_CONCURRENCY: String(RUNS),
        AGENTQ_EVENTS_MAXLEN: '100000',
        AGENTQ_RECONCILE_INTERVAL_MS: '2000',
        AGENTQ_RECONCILE_AFTER_MS: '10000',
        AGENTQ_LOG_LEVEL: 'warn',
      };
      fleet = await startWorkerFleet(WORKERS, env);
      client = new AgentClient({ config });
      const runClient = client;
      const runs = await Promise.all(
        Array.from({ length: RUNS }, (_, index) =>
          runClient.enqueue({
            graph: 'chain',
            input: { steps: STEPS, sleepMs: SLEEP_MS },
            runId: `redis-kill-${seed}-${index}`,
          }),
        ),
      );

      // Run records while Redis answers; undefined while it does not (the client fails fast then).
      const records = async (): Promise<RunRecord[] | undefined> => {
        try {
          return (await Promise.all(runs.map((run) => runClient.get(run.id)))).filter(
            (record): record is RunRecord => record !== null,
          );
        } catch {
          return undefined;
        }
      };
      const committedSteps = async () => (await records())?.reduce((sum, record) => sum + record.stepCount, 0);

      const faults: { fault: Fault; inFlight: number; downAt: number; answeredAt: number }[] = [];
      let progressMark = 0;
      for (const fault of FAULTS) {
        // Consumption has resumed for real (about one more step per run) before the next fault.
        progressMark = await eventually(
          async () => {
            const committed = await committedSteps();
            return committed !== undefined && committed >= progressMark + RUNS && committed;
          },
          120_000,
          `every run to commit another step before the ${fault}`,
        );
        const inFlight = (await records())?.filter((record) => !isTerminal(record.status)).length ?? 0;
        await (fault === 'kill' ? redis.kill() : redis.shutdown());
        // Taken once the process is gone: a graceful SHUTDOWN still commits what arrives before it exits.
        const downAt = Date.now();
        await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
        const answeredAt = await redis.start();
        faults.push({ fault, inFlight, downAt, answeredAt });
        console.log(
          `${SCENARIO}: ${fault} #${faults.length} with ${inFlight} runs in flight, ${progressMark} steps committed; Redis answered again after ${answeredAt - downAt} ms`,
        );
      }

      const finished = await eventually(
        async () => {
          const all = await records();
          return all && all.length === RUNS && all.every((record) => isTerminal(record.status)) && all;
        },
        atScale(90_000, 300_000),
        'every run to finish',
      );

      const { problems, commitTimes, startTimes } = await auditChainRuns(runClient, finished, STEPS);
      // Consumption: the first step job taken from the queue after Redis answered (steps caught mid-flight commit earlier).
      const resumeMs = faults.map(({ downAt, answeredAt }) => firstAfterOutage(startTimes, downAt, answeredAt));
      const commitMs = faults.map(({ downAt, answeredAt }) => firstAfterOutage(commitTimes, downAt, answeredAt));
      const rescued = fleet.lines().filter((line) => line.includes('reconciler: run had no live step job')).length;
      const completed = finished.filter((record) => record.status === 'completed').length;
      console.log(
        `${SCENARIO}: after Redis answered, first step taken (ms) ${resumeMs.join(', ')}, first commit (ms) ${commitMs.join(', ')}; runs re-enqueued by the reconciler ${rescued}; worker log ${JSON.stringify(fleet.messageCounts())}`,
      );

      recordFigure({ scenario: SCENARIO, name: 'seed', value: seed });
      recordFigure({ scenario: SCENARIO, name: 'faults', value: FAULTS.join(', ') });
      recordFigure({
        scenario: SCENARIO,
        name: 'runs_in_flight_at_faults',
        value: faults.map((fault) => fault.inFlight).join(', '),
        goal: `= ${RUNS} each`,
      });
      recordFigure({
        scenario: SCENARIO,
        name: 'runs_completed',
        value: `${completed}/${RUNS}`,
        goal: `${RUNS}/${RUNS}`,
      });
      recordFigure({ scenario: SCENARIO, name: 'lost_or_duplicate_step_commits', value: problems.length, goal: '= 0' });
      recordFigure({ scenario: SCENARIO, name: 'worker_exits', value: fleet.exits.length, goal: '= 0' });
      recordFigure({ scenario: SCENARIO, name: 'unhandled_rejections', value: fleet.crashLines().length, goal: '= 0' });
      recordFigure({
        scenario: SCENARIO,
        name: 'first_step_taken_after_redis_answers_ms',
        value: resumeMs.join(', '),
        goal: `≤ ${RESUME_GOAL_MS} each`,
      });
      recordFigure({ scenario: SCENARIO, name: 'first_commit_after_redis_answers_ms', value: commitMs.join(', ') });
      recordFigure({ scenario: SCENARIO, name: 'runs_reenqueued_by_reconciler', value: rescued });

      expect(faults.map((fault) => fault.inFlight)).toEqual(FAULTS.map(() => RUNS));
      expect(problems).toEqual([]);
      expect(fleet.exits).toEqual([]);
      expect(fleet.crashLines()).toEqual([]);
      // The goal (≤ 5 s) is a figure, not an assertion; this bound only catches a stall, such as BullMQ's
      // 15 s runRetryDelay after a connection error, or a connection that never comes back (NaN).
      for (const ms of [...resumeMs, ...commitMs]) expect(ms).toBeLessThan(STALL_MS);
    },
    atScale(180_000, 600_000),
  );
});
