import { createRequire } from 'node:module';
import type { QueueKeys as BullmqQueueKeys } from 'bullmq';
import { luaScript } from '../redis/lua-script.js';

type QueueKeysClass = typeof BullmqQueueKeys;
let queueKeysClass: QueueKeysClass | undefined;

/**
 * BullMQ's QueueKeys, loaded on first use from its own small module: the CLI's read commands import the
 * run store (whose scripts name these keys) without ever adding a job, and must not load BullMQ
 * (test/e2e/cli-read-path.test.ts). The class is stateless, so the CommonJS copy is the same.
 */
function QueueKeys(prefix: string): BullmqQueueKeys {
  queueKeysClass ??= (
    createRequire(import.meta.url)('bullmq/dist/cjs/classes/queue-keys.js') as { QueueKeys: QueueKeysClass }
  ).QueueKeys;
  return new queueKeysClass(prefix);
}

/**
 * A BullMQ queue's Redis keys by the names BullMQ gives them (QueueKeys.getKeys), and the KEYS layout of
 * each BullMQ script agentq's scripts call: the only place that knows which key goes at which position.
 * Every layout below is copied from BullMQ's own argument builders (src/classes/redis-queue-backend.ts in
 * BULLMQ_VERSION: addStandardJobArgs, addPrioritizedJobArgs, moveToActive, moveToFinishedArgs);
 * test/integration/bullmq-key-layouts.test.ts compares them with what BullMQ sends to a real Redis.
 */

/** The keys of a queue agentq's scripts use, by BullMQ's names; `job` and `metrics:completed` are per call. */
const QUEUE_KEY_NAMES = [
  'wait',
  'active',
  'paused',
  'prioritized',
  'delayed',
  'completed',
  'events',
  'stalled',
  'limiter',
  'meta',
  'id',
  'pc',
  'marker',
] as const;

type QueueKeyName = (typeof QUEUE_KEY_NAMES)[number];

/** A queue's keys by name, and `prefix`: `<prefix>:<queue>:`, what a job id or key name is appended to. */
export type NamedQueueKeys = Record<QueueKeyName, string> & { prefix: string };

/** The names a script's KEYS stand for, beyond a queue's own: the current job's key and the completed-metrics key. */
type LayoutName = QueueKeyName | 'job' | 'metrics:completed';

/** Each script's KEYS, in BullMQ's order (BULLMQ_VERSION). */
const SCRIPT_KEY_LAYOUTS = {
  addStandardJob: ['wait', 'paused', 'meta', 'id', 'completed', 'delayed', 'active', 'events', 'marker'],
  addPrioritizedJob: ['marker', 'meta', 'id', 'prioritized', 'delayed', 'completed', 'active', 'events', 'pc'],
  moveToActive: [
    'wait',
    'active',
    'prioritized',
    'events',
    'stalled',
    'limiter',
    'delayed',
    'paused',
    'meta',
    'pc',
    'marker',
  ],
  // KEYS[11] is the finished job's target set (`completed` for a completed job: agentq finishes no other way
  // in a script), KEYS[12] the job's own key, KEYS[13] the target's metrics key.
  moveToFinished: [
    'wait',
    'active',
    'prioritized',
    'events',
    'stalled',
    'limiter',
    'delayed',
    'paused',
    'meta',
    'pc',
    'completed',
    'job',
    'metrics:completed',
    'marker',
  ],
} as const satisfies Record<string, readonly LayoutName[]>;

type LayoutScript = keyof typeof SCRIPT_KEY_LAYOUTS;

/** The keys of queue `name` under `prefix` (`bull`, or a shard's `bull:{s0}`), as BullMQ's QueueKeys names them. */
export function bullmqQueueKeys(prefix: string, name: string): NamedQueueKeys {
  const keys = QueueKeys(prefix).getKeys(name);
  const named = { prefix: keys['']! } as NamedQueueKeys;
  for (const key of QUEUE_KEY_NAMES) named[key] = keys[key]!;
  return named;
}

/** BullMQ's `<prefix>:<queue>`: the base every key of the queue starts with (what Worker.toKey prepends). */
export function queueQualifiedName(prefix: string, name: string): string {
  return QueueKeys(prefix).getQueueQualifiedName(name);
}

function layout(script: LayoutScript, keys: NamedQueueKeys, jobId = ''): string[] {
  return SCRIPT_KEY_LAYOUTS[script].map((name: LayoutName) =>
    name === 'job' ? keys.prefix + jobId : name === 'metrics:completed' ? keys.prefix + name : keys[name],
  );
}

/** addStandardJob's KEYS. */
export function addStandardJobKeys(keys: NamedQueueKeys): string[] {
  return layout('addStandardJob', keys);
}

/** addPrioritizedJob's KEYS. */
export function addPrioritizedJobKeys(keys: NamedQueueKeys): string[] {
  return layout('addPrioritizedJob', keys);
}

/** moveToActive's KEYS. */
export function moveToActiveKeys(keys: NamedQueueKeys): string[] {
  return layout('moveToActive', keys);
}

/** moveToFinished's KEYS for completing job `jobId`. */
export function moveToFinishedKeys(keys: NamedQueueKeys, jobId: string): string[] {
  return layout('moveToFinished', keys, jobId);
}

/**
 * The keys a script that adds a job (standard or prioritized) touches, each once, in a fixed order: what
 * such a script declares (its Lua builds the named table from the queue's prefix, see bullmqLua).
 */
export function addJobKeys(keys: NamedQueueKeys): string[] {
  return [...new Set([...addStandardJobKeys(keys), ...addPrioritizedJobKeys(keys)])];
}

/** Lua: the named table of a queue's keys, `q.wait`, `q['metrics:completed']`, `q.job` (the job `job_id`'s key). */
export function queueKeysLua(): string {
  const entries = QUEUE_KEY_NAMES.map((name) => `['${name}'] = prefix .. '${name}'`);
  return luaScript(new URL('./lua/queue-keys.lua', import.meta.url), { QUEUE_KEY_ENTRIES: entries.join(', ') });
}

/** Lua: `{q['wait'], q['paused'], …}`, a script's KEYS table made from the named table `q`. */
export function keysTableLua(script: LayoutScript, table = 'q'): string {
  return `{${SCRIPT_KEY_LAYOUTS[script].map((name) => `${table}['${name}']`).join(', ')}}`;
}
