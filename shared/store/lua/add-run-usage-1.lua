--[[
  Usage of an attempt that paid and then failed, added to the run while it exists: after the run expired,
  HINCRBY would make a meta of usage alone, with no TTL.
  KEYS: 1 the run's meta · ARGV: 1 input tokens · 2 output tokens · 3 cost in USD ('' none) · 4 cached input
  tokens ('' none) · 5 the cost had none been cached ('' none)
  → 1 added | 0 (the run is gone)

  KEYS[1] the run's meta
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HINCRBY', KEYS[1], 'inputTokens', ARGV[1])
redis.call('HINCRBY', KEYS[1], 'outputTokens', ARGV[2])
if ARGV[3] ~= '' then redis.call('HINCRBYFLOAT', KEYS[1], 'costUsd', ARGV[3]) end
if ARGV[4] and ARGV[4] ~= '' then redis.call('HINCRBY', KEYS[1], 'cachedInputTokens', ARGV[4]) end
if ARGV[5] and ARGV[5] ~= '' then redis.call('HINCRBYFLOAT', KEYS[1], 'uncachedCostUsd', ARGV[5]) end
return 1
