/**
 * Engine v2's two step scripts (docs/concepts/step-engine.md): a step's whole transition in one round trip, and a cold
 * fetch that brings the job's cursor along. Both compose BullMQ's own scripts with the run store's BEGIN and
 * COMMIT (run-scripts.ts), through the BullMQ seam's named Lua helpers (shared/bullmq/bullmq-lua.ts):
 * nothing here knows a BullMQ key's position, option encoding or job-hash field. Every key they touch
 * carries the shard's hash tag: the run's keys and the shard's step queue share one Redis Cluster slot,
 * so each script stays atomic there. `rk` is a run's seven keys (run-scripts.ts), `q` the shard queue's
 * keys by BullMQ's names (`bullmq_queue_keys`).
 */
import { bullmqLua } from '../bullmq/bullmq-lua.js';
import { RUN_KEY_SUFFIXES } from './keys.js';
import { RUN_LUA_VALUES } from './run-scripts.js';
import { FAIR_LUA_VALUES } from './fair-queue.js';
import { luaScript } from '../redis/lua-script.js';

const RUN_KEYS_LUA = `{${RUN_KEY_SUFFIXES.map((suffix) => `base .. ':${suffix}'`).join(', ')}}`;

/** One step's transition Its KEYS, ARGV and reply: the header of lua/step-transition-1.lua. */
export const STEP_TRANSITION = luaScript(new URL('./lua/step-transition-1.lua', import.meta.url), {
  ...RUN_LUA_VALUES,
  ...FAIR_LUA_VALUES,
  RUN_KEYS: RUN_KEYS_LUA,
  BULLMQ: bullmqLua(['addJob', 'completeJob', 'jobData', 'leanHop', 'takeIfNext', 'priorities']),
});

/** A cold fetch (no transition handed a job out) Its KEYS, ARGV and reply: the header of lua/step-take-11.lua. */
export const STEP_TAKE = luaScript(new URL('./lua/step-take-11.lua', import.meta.url), {
  ...RUN_LUA_VALUES,
  RUN_KEYS: RUN_KEYS_LUA,
  BULLMQ: bullmqLua(['takeJob', 'jobData']),
});

/** A producer's enqueue in one script Its KEYS, ARGV and reply: the header of lua/create-run-and-start-19.lua. */
export const CREATE_RUN_AND_START = luaScript(new URL('./lua/create-run-and-start-19.lua', import.meta.url), {
  ...FAIR_LUA_VALUES,
  BULLMQ: bullmqLua(['addJob', 'priorities', 'takeIfNext']),
});
