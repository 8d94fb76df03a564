--[[
  Fragment, included with --@include: tokens_followed(log, channel, cluster). No KEYS or ARGV of its own.

  Whether anyone follows a run's live tokens: its token log exists (every follower of the API, the client
  library and the CLI makes it before it subscribes: watch-tokens-1.lua), or the run's token channel has a
  subscriber (someone on the raw channel who keeps no log). `log` is the run's token log key, `channel` its
  pub/sub channel (same hash tag), `cluster` '1' on a Redis Cluster (sharded pub/sub: SHARDNUMSUB on the
  shard's own node, where a run's tokens are published), else '0'. → true or false.
]]
local function tokens_followed(log, channel, cluster)
  if redis.call('EXISTS', log) == 1 then return true end
  local counts = redis.call('PUBSUB', cluster == '1' and 'SHARDNUMSUB' or 'NUMSUB', channel)
  return tonumber(counts[2]) > 0
end
