import { luaScript } from '../../shared/redis/lua-script.js';
/**
 * The Lua scripts of model calls through the provider's Batch API. A call is named by its
 * custom id `<run id>|<step id>|<memo key>|<attempt>`; its state lives in the batch's `calls` hash
 * (Keys.providerBatch), one JSON object per call:
 *   {s: 'pending', m: model, at: parked at ms}             parked, not yet in a provider batch
 *   {s: 'assigned', m, at, f: flush id}                     in that flush's provider batch (at most one)
 *   {s: 'applied', f}                                       answered: the answer is in the step's memo
 *   {s: 'error', f, e: error record}                        answered with an error: the step fails with it
 *   {s: 'live', f}                                          to be called live (AGENTQ_PROVIDER_BATCH_FALLBACK=live)
 * Each script works on one batch's keys (one hash tag), except APPLY_ANSWER, which works on one run's.
 */

/** A step's call asks to go in a provider batch. Its KEYS, ARGV and reply: the header of lua/register-call-4.lua. */
export const REGISTER_CALL = luaScript(new URL('./lua/register-call-4.lua', import.meta.url));

/** Takes the oldest pending calls of one model into a new flush (the intent of one provider batch, recorded before anything is uploaded). Its KEYS, ARGV and reply: the header of lua/take-flush-5.lua. */
export const TAKE_FLUSH = luaScript(new URL('./lua/take-flush-5.lua', import.meta.url));

/** Saves a call's answer in its step's memo, where a live call's answer is saved (so it is paid for once), if the run is still at that step; the step's other saved results are kept as they are (appended to, never re-encoded). Its KEYS, ARGV and reply: the header of lua/apply-answer-3.lua. */
export const APPLY_ANSWER = luaScript(new URL('./lua/apply-answer-3.lua', import.meta.url));

/** A flush's calls get their verdicts, and the flush its next state, in one step. Its KEYS, ARGV and reply: the header of lua/mark-calls-4.lua. */
export const MARK_CALLS = luaScript(new URL('./lua/mark-calls-4.lua', import.meta.url));

/** Calls still pending get a verdict without going in any provider batch (the batch was cancelled, or the provider has no Batch API). Its KEYS, ARGV and reply: the header of lua/settle-pending-3.lua. */
export const SETTLE_PENDING = luaScript(new URL('./lua/settle-pending-3.lua', import.meta.url));

/** Renews the collector's lease if this worker still holds it. Its KEYS, ARGV and reply: the header of lua/renew-lease-1.lua. */
export const RENEW_LEASE = luaScript(new URL('./lua/renew-lease-1.lua', import.meta.url));
