import { randomUUID } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { bullmqScript, sha1, type BullmqScriptName } from '../../shared/bullmq/bullmq-functions.js';
import {
  addPrioritizedJobKeys,
  addStandardJobKeys,
  bullmqQueueKeys,
  moveToActiveKeys,
  moveToFinishedKeys,
} from '../../shared/bullmq/bullmq-keys.js';
import { eventually } from '../helpers/test-env.js';

/**
 * The seam's KEYS layouts (shared/bullmq/bullmq-keys.ts) against BullMQ itself: a plain Queue and Worker
 * add, take and complete jobs on a real Redis while MONITOR records the scripts they call; each script's
 * KEYS must be what the seam's builder makes for the same queue. An upgrade that reorders, adds or drops
 * a key of a script agentq composes fails here, naming the script.
 */
describe("the BullMQ seam's key layouts", () => {
  const closers: (() => Promise<unknown> | void)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  it('are the KEYS BullMQ sends with each script it runs, seen by MONITOR', async () => {
    const url = inject('redisUrl');
    const prefix = `bull:{layout-${randomUUID().slice(0, 8)}}`;
    const name = 'layouts';
    const names: BullmqScriptName[] = ['addStandardJob', 'addPrioritizedJob', 'moveToActive', 'moveToFinished'];
    const scriptOf = new Map(names.map((script) => [sha1(bullmqScript(script).content), script]));
    const sent = new Map<BullmqScriptName, string[][]>();
    const monitorConnection = new Redis(url);
    closers.push(() => monitorConnection.disconnect());
    const monitor = await monitorConnection.monitor();
    closers.push(() => monitor.disconnect());
    monitor.on('monitor', (_time: string, args: unknown[]) => {
      const [command, script, count, ...rest] = args.map(String);
      const lower = command?.toLowerCase();
      if (lower !== 'evalsha' && lower !== 'eval') return;
      const scriptName = scriptOf.get(lower === 'eval' ? sha1(unescapeMonitor(script!)) : script!);
      const keys = rest.slice(0, Number(count));
      // This test's queue only: other tests share the Redis.
      if (!scriptName || !keys[0]?.startsWith(prefix)) return;
      sent.set(scriptName, [...(sent.get(scriptName) ?? []), keys]);
    });

    const connection = { url };
    const queue = new Queue(name, { connection, prefix });
    closers.push(() => queue.close());
    await queue.add('standard', { n: 1 }, { jobId: 'standard-job' });
    await queue.add('prioritized', { n: 2 }, { jobId: 'prioritized-job', priority: 3 });
    const worker = new Worker(name, async () => 'done', { connection, prefix });
    closers.push(() => worker.close());
    await eventually(async () => (await queue.getJobCounts('completed')).completed === 2);

    const keys = bullmqQueueKeys(prefix, name);
    await eventually(async () => names.every((script) => sent.has(script)));
    expect(sent.get('addStandardJob')![0], 'addStandardJob').toEqual(addStandardJobKeys(keys));
    expect(sent.get('addPrioritizedJob')![0], 'addPrioritizedJob').toEqual(addPrioritizedJobKeys(keys));
    expect(sent.get('moveToActive')![0], 'moveToActive').toEqual(moveToActiveKeys(keys));
    const finished = sent.get('moveToFinished')!;
    const jobId = finished[0]![11]!.slice(keys.prefix.length);
    expect(['standard-job', 'prioritized-job']).toContain(jobId);
    expect(finished[0], 'moveToFinished').toEqual(moveToFinishedKeys(keys, jobId));
  });
});

/** A MONITOR argument as it was sent: Redis prints it escaped (sdscatrepr: backslash n, quote, xHH for other bytes). */
function unescapeMonitor(text: string): string {
  const named: Record<string, number> = { n: 10, r: 13, t: 9, a: 7, b: 8, '\\': 92, '"': 34 };
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i += 1) {
    if (text[i] !== '\\') {
      bytes.push(...Buffer.from(text[i]!, 'utf8'));
    } else if (text[i + 1] === 'x') {
      bytes.push(parseInt(text.slice(i + 2, i + 4), 16));
      i += 3;
    } else {
      bytes.push(named[text[i + 1]!] ?? text.charCodeAt(i + 1));
      i += 1;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}
