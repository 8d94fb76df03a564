--[[
  Whether anyone follows a run's live tokens (tokens-followed.lua says how it is told): a worker that holds
  a streaming answer's text while nobody follows looks again with this, and publishes what it held once
  someone does.

  Input:
    KEYS[1] the run's token log

    ARGV[1] the run's token channel (same hash tag)
    ARGV[2] '1' on a Redis Cluster (sharded pub/sub), else '0'

  Output:
    1 when someone follows the run, else 0
]]
--@include ./tokens-followed.lua
return tokens_followed(KEYS[1], ARGV[1], ARGV[2]) and 1 or 0
