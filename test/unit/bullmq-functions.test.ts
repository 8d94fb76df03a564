import { describe, expect, it } from 'vitest';
import { BULLMQ_SCRIPT_SHA1, BULLMQ_VERSION, bullmqScript, installedBullmqVersion, sha1, type BullmqScriptName } from '../../shared/redis/bullmq-functions.js';

/**
 * The guard of engine v2's composed scripts: they call BullMQ's own addStandardJob, addPrioritizedJob, moveToActive and
 * moveToFinished with the KEYS/ARGV layout of one bullmq version. An upgrade that changes any of them
 * must fail here, loudly, until someone re-checks step-transition-scripts.ts against the new layout and
 * records the new hashes.
 */
describe('the BullMQ scripts the step engine composes', () => {
  it(`are bullmq ${BULLMQ_VERSION}'s: an upgrade must re-check step-transition-scripts.ts`, () => {
    expect(installedBullmqVersion(), 'bullmq was upgraded: re-check the KEYS/ARGV layout used in shared/redis/step-transition-scripts.ts, then update BULLMQ_VERSION').toBe(BULLMQ_VERSION);
  });

  it.each(Object.keys(BULLMQ_SCRIPT_SHA1) as BullmqScriptName[])('%s has the text (and so the KEYS/ARGV layout) it was checked against', (name) => {
    const script = bullmqScript(name);
    expect(sha1(script.content), `BullMQ's ${name} script changed: re-check its KEYS/ARGV in step-transition-scripts.ts, then record its new sha1`).toBe(BULLMQ_SCRIPT_SHA1[name]);
    expect(script.keys).toBe({ addStandardJob: 9, addPrioritizedJob: 9, moveToActive: 11, moveToFinished: 14 }[name]);
  });
});
