import { luaScript } from '../../shared/redis/lua-script.js';

/**
 * Claims on paid work: before a step pays for a model call (or embeddings, moderation, a tool
 * marked paid — anything behind NodeContext.memo), it claims that call in the run's memo hash, atomically
 * with reading whether an earlier attempt already saved its result. A duplicate delivery of the step (its
 * job's lock expired while the owner was merely slow) finds the claim and waits instead of paying again.
 * Fields of the memo hash: `s<k>.t<i>` the step's saved results (JSON map), `claim:s<k>.t<i>:<key>` a claim.
 */

/** KEYS. Its KEYS, ARGV and reply: the header of lua/claim-paid-work-4.lua. */
export const CLAIM_PAID_WORK = luaScript(new URL('./lua/claim-paid-work-4.lua', import.meta.url));

/** The last look before a claimed call is paid for (a paused worker sent calls 5-6 s after the step was committed elsewhere). Its KEYS, ARGV and reply: the header of lua/confirm-paid-claim-3.lua. */
export const CONFIRM_PAID_CLAIM = luaScript(new URL('./lua/confirm-paid-claim-3.lua', import.meta.url));

/** Save a step's results and end the claim of the call that produced them, in one script, unless the run has ended. Its KEYS, ARGV and reply: the header of lua/save-paid-work-2.lua. */
export const SAVE_PAID_WORK = luaScript(new URL('./lua/save-paid-work-2.lua', import.meta.url));

/** SAVE_PAID_WORK and the call's recording in one script, for a run that records `full`. Its KEYS, ARGV and reply: the header of lua/save-and-record-paid-work-8.lua. */
export const SAVE_AND_RECORD_PAID_WORK = luaScript(new URL('./lua/save-and-record-paid-work-8.lua', import.meta.url));

/** End a claim without a result (the call failed or was abandoned), if it is still the claimant's. Its KEYS, ARGV and reply: the header of lua/release-paid-claim-1.lua. */
export const RELEASE_PAID_CLAIM = luaScript(new URL('./lua/release-paid-claim-1.lua', import.meta.url));
