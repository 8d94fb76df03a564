/**
 * Lua scripts of the run store. Each touches only one run's keys (one hash tag), so it is atomic in
 * Redis Cluster too. Every script that changes a run first checks the cursor (`superstep`) and the
 * status: that fence is what makes a committed step never run twice.
 *
 * The scripts are the `.lua` files of lua/ (each opens with its KEYS and ARGV); the functions they share
 * are fragments there, composed with `--@include` (shared/redis/lua-script.ts).
 *
 * Run keys, in the order `Keys.runAll` gives them:
 *   KEYS[1] meta · KEYS[2] state · KEYS[3] messages · KEYS[4] steps · KEYS[5] events · KEYS[6] writes · KEYS[7] memo
 *   · KEYS[8] record (time travel's recording)
 */

import type { ErrorRecord } from '../contracts/errors.js';
import { RUN_KEY_SUFFIXES } from './keys.js';
import { STEP_META_FIELDS } from './run-meta.js';
import { luaScript } from '../redis/lua-script.js';

const RUN_KEY_COUNT = RUN_KEY_SUFFIXES.length;

/** The error a cancelled run ends with. */
export const CANCELLED_ERROR: ErrorRecord = {
  code: 'CANCELLED',
  message: 'the run was cancelled on request',
  retryable: false,
};
/** As Lua string literals (long brackets: JSON never contains "]]" here). */
const CANCELLED_ERROR_LUA = `[[${JSON.stringify(CANCELLED_ERROR)}]]`;
const CANCELLED_END_LUA = `[[${JSON.stringify({ status: 'cancelled', error: CANCELLED_ERROR })}]]`;

const STEP_FIELDS_LUA = STEP_META_FIELDS.map((field) => `'${field}'`).join(', ');

/** What the run store's Lua files take from TypeScript (their {{NAME}} placeholders): every run script gets them all. */
export const RUN_LUA_VALUES = {
  RUN_KEY_COUNT,
  STEP_FIELDS: STEP_FIELDS_LUA,
  CANCELLED_ERROR: CANCELLED_ERROR_LUA,
  CANCELLED_END: CANCELLED_END_LUA,
};

/** Creates the run unless it exists. Its KEYS, ARGV and reply: the header of lua/create-run-8.lua. */
export const CREATE_RUN = luaScript(new URL('./lua/create-run-8.lua', import.meta.url), RUN_LUA_VALUES);

/** A debounced run's input replaced while it waits to start. Its KEYS, ARGV and reply: the header of lua/replace-input-8.lua. */
export const REPLACE_INPUT = luaScript(new URL('./lua/replace-input-8.lua', import.meta.url), RUN_LUA_VALUES);

/** The intake's hand-over. Its KEYS, ARGV and reply: the header of lua/admit-run-8.lua. */
export const ADMIT_RUN = luaScript(new URL('./lua/admit-run-8.lua', import.meta.url), RUN_LUA_VALUES);

/** BEGIN on its own (a job fetched without its cursor). Its KEYS, ARGV and reply: the header of lua/begin-step-8.lua. */
export const BEGIN_STEP = luaScript(new URL('./lua/begin-step-8.lua', import.meta.url), RUN_LUA_VALUES);

/** Commit on its own (a parallel superstep's advance has no job to finish). Its KEYS, ARGV and reply: the header of lua/commit-step-8.lua. */
export const COMMIT_STEP = luaScript(new URL('./lua/commit-step-8.lua', import.meta.url), RUN_LUA_VALUES);

/** End a run that is not finished. Its KEYS, ARGV and reply: the header of lua/finish-run-8.lua. */
export const FINISH_RUN = luaScript(new URL('./lua/finish-run-8.lua', import.meta.url), RUN_LUA_VALUES);

/** A cancellation request. Its KEYS, ARGV and reply: the header of lua/request-cancel-8.lua. */
export const REQUEST_CANCEL = luaScript(new URL('./lua/request-cancel-8.lua', import.meta.url), RUN_LUA_VALUES);

/** Retry a failed run from its last commit. Its KEYS, ARGV and reply: the header of lua/retry-run-8.lua. */
export const RETRY_RUN = luaScript(new URL('./lua/retry-run-8.lua', import.meta.url), RUN_LUA_VALUES);

/** A node asked for input. Its KEYS, ARGV and reply: the header of lua/interrupt-run-8.lua. */
export const INTERRUPT_RUN = luaScript(new URL('./lua/interrupt-run-8.lua', import.meta.url), RUN_LUA_VALUES);

/** Answer a waiting run. Its KEYS, ARGV and reply: the header of lua/resume-run-9.lua. */
export const RESUME_RUN = luaScript(new URL('./lua/resume-run-9.lua', import.meta.url), RUN_LUA_VALUES);

/** A step's memoised paid work saved unless the run ended. Its KEYS, ARGV and reply: the header of lua/put-memo-2.lua. */
export const PUT_MEMO = luaScript(new URL('./lua/put-memo-2.lua', import.meta.url));

/** An event added while the run exists. Its KEYS, ARGV and reply: the header of lua/add-run-event-2.lua. */
export const ADD_RUN_EVENT = luaScript(new URL('./lua/add-run-event-2.lua', import.meta.url));

/** A failed attempt's usage added while the run exists. Its KEYS, ARGV and reply: the header of lua/add-run-usage-1.lua. */
export const ADD_RUN_USAGE = luaScript(new URL('./lua/add-run-usage-1.lua', import.meta.url));
/** A note set once on a run's meta while the run exists. Its KEYS, ARGV and reply: the header of lua/note-on-live-meta-1.lua. */
export const NOTE_ON_LIVE_META = luaScript(new URL('./lua/note-on-live-meta-1.lua', import.meta.url));
