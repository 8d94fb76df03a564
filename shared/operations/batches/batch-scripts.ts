/** The batch dispatcher's Lua scripts (BatchDispatcher): each over one batch's keys, one hash tag. */
import { luaScript } from '../../redis/lua-script.js';

/**
 * A finished run of the batch was retried (in place, same id): it is in flight again, no longer counted
 * as finished. KEYS: 1 meta · 2 inflight · 3 done · ARGV: 1 run id → 1, or 0 when the batch is gone
 */
export const REOPEN = luaScript(new URL('./lua/reopen-batch-run-3.lua', import.meta.url));

/** CLAIM_FN on its own. KEYS: 1 meta · 2 inflight · 3 items · ARGV: 1 run id prefix · 2 now */
export const CLAIM = luaScript(new URL('./lua/claim-batch-item-3.lua', import.meta.url));

/** claim_next's stop code (lua/claim-next.lua) for a batch holding items its admission refused: those start first. */
export const CLAIM_DEFERRED = -4;

/** Up to a number of CLAIMs at once. Its KEYS, ARGV and reply: the header of lua/claim-batch-items-3.lua. */
export const CLAIM_MANY = luaScript(new URL('./lua/claim-batch-items-3.lua', import.meta.url));

/**
 * A run of the batch finished: its usage into the batch's totals (once per run), and its slot freed; the
 * batch is completed once every item was dispatched and none is in flight. While it is still running,
 * the freed slot's next item is claimed in the same step (as CLAIM): the next question starts one round
 * trip after the last one ended, not four. Its KEYS, ARGV and reply: the header of lua/release-batch-run-5.lua.
 */
export const RELEASE = luaScript(new URL('./lua/release-batch-run-5.lua', import.meta.url));

/** A planned batch's call: its mode, or the budget's stop. Its KEYS, ARGV and reply: the header of lua/admit-call-3.lua. */
export const ADMIT_CALL = luaScript(new URL('./lua/admit-call-3.lua', import.meta.url));

/** A planned batch's call answered or failed: its hold becomes its cost. Its KEYS, ARGV and reply: the header of lua/settle-call-2.lua. */
export const SETTLE_CALL = luaScript(new URL('./lua/settle-call-2.lua', import.meta.url));

/** A planned batch changes mode, if nothing moved it meanwhile. Its KEYS, ARGV and reply: the header of lua/replan-batch-1.lua. */
export const REPLAN = luaScript(new URL('./lua/replan-batch-1.lua', import.meta.url));

/** A finished question moves the tenant's rolling averages of its graph. Its KEYS, ARGV and reply: the header of lua/record-autopilot-sample-1.lua. */
export const RECORD_SAMPLE = luaScript(new URL('./lua/record-autopilot-sample-1.lua', import.meta.url));
