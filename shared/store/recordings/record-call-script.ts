import { RECORD_LUA } from '../run-scripts.js';

/**
 * Records one paid call of a step (issue 39): its contents (messages, tool lists) not recorded yet, then
 * the call itself — within the run's byte budget (RECORD_LUA's record_put), only while the run records
 * `full` and is not finished (a finished run's keys are expiring: nothing may be added without a TTL).
 * A call recorded already is left as it is (a retried step asks the same, and is answered from its memo).
 * KEYS: the run's keys (Keys.runAll) · ARGV: 1 call field · 2 call JSON · 3 n · n pairs (content address, JSON)
 * → 'ok' | 'exists' | 'off' (not recording, or finished) | 'over' (the byte budget is spent)
 */
export const RECORD_CALL = `${RECORD_LUA}
local m = redis.call('HMGET', KEYS[1], 'status', 'record', 'recordMax')
if not m[1] or m[1] == 'completed' or m[1] == 'failed' or m[1] == 'cancelled' or m[2] ~= 'full' then return 'off' end
if redis.call('HEXISTS', KEYS[8], ARGV[1]) == 1 then return 'exists' end
if redis.call('HEXISTS', KEYS[8], 'over') == 1 then return 'over' end
for i = 0, tonumber(ARGV[3]) - 1 do
  local field = ARGV[4 + 2 * i]
  if redis.call('HEXISTS', KEYS[8], field) == 0 and not record_put(KEYS, m[3], field, ARGV[5 + 2 * i]) then return 'over' end
end
if not record_put(KEYS, m[3], ARGV[1], ARGV[2]) then return 'over' end
return 'ok'
`;
