import { describe, expect, it } from 'vitest';
import { BULLMQ_MAIN_LOOP_SHA1, bullmqMainLoopSource } from '../../shared/bullmq/taking-worker.js';
import {
  BULLMQ_SCRIPT_SHA1,
  BULLMQ_VERSION,
  bullmqScript,
  installedBullmqVersion,
  sha1,
  type BullmqScriptName,
} from '../../shared/bullmq/bullmq-functions.js';

/**
 * The guard of engine v2's composed scripts: they call BullMQ's own addStandardJob, addPrioritizedJob, moveToActive and
 * moveToFinished with the KEYS/ARGV layout of one bullmq version. An upgrade that changes any of them
 * must fail here, loudly, until someone follows the upgrade checklist (shared/bullmq/README.md) and
 * records the new hashes.
 */
describe('the BullMQ scripts the step engine composes', () => {
  it(`are bullmq ${BULLMQ_VERSION}'s: an upgrade follows shared/bullmq/README.md`, () => {
    expect(
      installedBullmqVersion(),
      'bullmq was upgraded: follow the upgrade checklist in shared/bullmq/README.md, then update BULLMQ_VERSION',
    ).toBe(BULLMQ_VERSION);
  });

  it.each(Object.keys(BULLMQ_SCRIPT_SHA1) as BullmqScriptName[])(
    '%s has the text (and so the KEYS/ARGV layout) it was checked against',
    (name) => {
      const script = bullmqScript(name);
      expect(
        sha1(script.content),
        `BullMQ's ${name} script changed: re-check its KEYS/ARGV in shared/bullmq/bullmq-keys.ts and bullmq-lua.ts, then record its new sha1`,
      ).toBe(BULLMQ_SCRIPT_SHA1[name]);
      expect(script.keys).toBe(
        { addStandardJob: 9, addPrioritizedJob: 9, moveToActive: 11, moveToFinished: 14, moveStalledJobsToWait: 9 }[
          name
        ],
      );
    },
  );

  // The lean hop (bullmq_lean_hop and bullmq_take_if_next in shared/bullmq/bullmq-lua.ts) is agentq's own copy of what these scripts write
  // for a step job; test/integration/lean-hop.test.ts compares the two on Redis. These are the lines it
  // reproduces: when one changes, the copy must change with it.
  it.each([
    [
      'addStandardJob',
      'rcall("HMSET", jobIdKey, "name", name, "data", data, "opts", jsonOpts,\n          "timestamp", timestamp, "delay", delay, "priority", priority,',
    ],
    ['addStandardJob', 'rcall("XADD", eventsKey, "*", "event", "added", "jobId", jobId, "name", name)'],
    ['moveToActive', 'rcall("SET", lockKey, opts[\'token\'], "PX", opts[\'lockDuration\'])'],
    ['moveToActive', 'rcall("XADD", eventStreamKey, "*", "event", "active", "jobId", jobId, "prev", "waiting")'],
    ['moveToActive', 'rcall("HMSET", jobKey, "processedOn", processedOn, unpack(optionalValues))'],
    ['moveToActive', 'rcall("HINCRBY", jobKey, "ats", 1)'],
    ['moveToFinished', 'local numRemovedElements = rcall("LREM", KEYS[2], -1, jobId)'],
    ['moveToFinished', 'local attemptsMade = rcall("HINCRBY", jobIdKey, "atm", 1)'],
    ['moveToFinished', 'rcall("HSET", jobIdKey, ARGV[3], ARGV[4], "finishedOn", timestamp)'],
    ['moveToFinished', 'rcall("ZREMRANGEBYRANK", targetSet, 0, -(maxCount + 1))'],
    [
      'moveToFinished',
      "return rcall(\"DEL\", jobKey, jobKey .. ':logs', jobKey .. ':dependencies',\n    jobKey .. ':processed', jobKey .. ':failed', jobKey .. ':unsuccessful')",
    ],
    [
      'moveToFinished',
      'rcall("XADD", eventStreamKey, "*", "event", ARGV[5], "jobId", jobId, ARGV[3], ARGV[4], "prev", "active")',
    ],
  ] as [BullmqScriptName, string][])('%s still writes what the lean hop copies: %s', (name, line) => {
    expect(
      bullmqScript(name).content,
      `BullMQ's ${name} changed a line the lean hop copies: update the lean hop in shared/bullmq/bullmq-lua.ts`,
    ).toContain(line);
  });

  // TakingWorker (shared/bullmq/taking-worker.ts) runs its own copy of BullMQ's private Worker.mainLoop, changed to
  // fill free slots with batched takes: an upgrade that changes BullMQ's loop must be ported into it.
  it("Worker's main loop is the one TakingWorker's loop copies", () => {
    const source = bullmqMainLoopSource();
    expect(
      typeof source,
      'BullMQ no longer has Worker.mainLoop: TakingWorker replaces it by name (shared/bullmq/taking-worker.ts)',
    ).toBe('string');
    expect(
      sha1(source!),
      "BullMQ's Worker.mainLoop changed: port the change into TakingWorker.takingMainLoop, then record its new sha1 (BULLMQ_MAIN_LOOP_SHA1)",
    ).toBe(BULLMQ_MAIN_LOOP_SHA1);
  });
});
