/** The batch dispatcher's Lua scripts (BatchDispatcher): each over one batch's keys, one hash tag. */
import { luaScript } from '../../redis/lua-script.js';

/**
 * A finished run of the batch was retried (in place, same id): it is in flight again, no longer counted
 * as finished. KEYS: 1 meta · 2 inflight · 3 done · ARGV: 1 run id → 1, or 0 when the batch is gone
 */
export const REOPEN = luaScript(new URL('./lua/reopen-batch-run-3.lua', import.meta.url));

/** CLAIM_FN on its own. KEYS: 1 meta · 2 inflight · 3 items · ARGV: 1 run id prefix · 2 now */
export const CLAIM = luaScript(new URL('./lua/claim-batch-item-3.lua', import.meta.url));

/**
 * A run of the batch finished: free its slot; the batch is completed once every item was dispatched
 * and none is in flight. While it is still running, the freed slot's next item is claimed in the same
 * step (as CLAIM): the next question starts one round trip after the last one ended, not four.
 * The run's status is counted in the meta (`done_<status>`) once per finish: `done` remembers what each
 * run was counted as, so a retried run that finishes again moves from its old count to its new one.
 * KEYS: 1 meta · 2 inflight · 3 items · 4 done · ARGV: 1 run id · 2 now · 3 run id prefix · 4 the run's status
 * → {batch status} ('missing': the batch expired; nothing is written) or {'running', CLAIM's reply}
 */
export const RELEASE = luaScript(new URL('./lua/release-batch-run-4.lua', import.meta.url));

/** A finished run's usage into the batch's totals, once per run. Its KEYS, ARGV and reply: the header of lua/add-run-usage-2.lua. */
export const ADD_RUN_USAGE = luaScript(new URL('./lua/add-run-usage-2.lua', import.meta.url));

/** A planned batch's call: its mode, or the budget's stop. Its KEYS, ARGV and reply: the header of lua/admit-call-3.lua. */
export const ADMIT_CALL = luaScript(new URL('./lua/admit-call-3.lua', import.meta.url));

/** A planned batch's call answered or failed: its hold becomes its cost. Its KEYS, ARGV and reply: the header of lua/settle-call-2.lua. */
export const SETTLE_CALL = luaScript(new URL('./lua/settle-call-2.lua', import.meta.url));

/** A planned batch changes mode, if nothing moved it meanwhile. Its KEYS, ARGV and reply: the header of lua/replan-batch-1.lua. */
export const REPLAN = luaScript(new URL('./lua/replan-batch-1.lua', import.meta.url));

/** A finished question moves the tenant's rolling averages of its graph. Its KEYS, ARGV and reply: the header of lua/record-autopilot-sample-1.lua. */
export const RECORD_SAMPLE = luaScript(new URL('./lua/record-autopilot-sample-1.lua', import.meta.url));
