--[[
  A run request's debounce (FlowGates.debounce), on Redis's clock.
  KEYS[1] the debounce key (Keys.flowKey): "<pending run id> <first request's time ms>", expiring as
  the window closes.
  ARGV: delayMs, maxDelayMs, mode ('trailing' | 'leading'), the new run's id, a run id the key may no
        longer hold ('' for none: the caller found that run already started)
  → {'new', runId, startInMs}: no run pending; the new run is it, to start in startInMs;
    {'join', runId, startInMs} (trailing): the pending run takes this request's input, starts in startInMs;
    {'drop', runId} (leading): the window's first run stands and this request is dropped.
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local delay, max_delay = tonumber(ARGV[1]), tonumber(ARGV[2])
local mode, new_id, stale = ARGV[3], ARGV[4], ARGV[5]
local held = redis.call('GET', KEYS[1])
if held then
  local run_id, first_at = string.match(held, '^(%S+) (%d+)$')
  if run_id and run_id ~= stale then
    local close_at = math.min(now + delay, tonumber(first_at) + max_delay)
    if close_at > now then
      redis.call('PEXPIREAT', KEYS[1], close_at)
      if mode == 'leading' then return { 'drop', run_id } end
      return { 'join', run_id, close_at - now }
    end
  end
end
local close_at = now + math.min(delay, max_delay)
redis.call('SET', KEYS[1], new_id .. ' ' .. now, 'PXAT', close_at)
if mode == 'leading' then return { 'new', new_id, 0 } end
return { 'new', new_id, close_at - now }
