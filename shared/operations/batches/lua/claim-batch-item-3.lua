--[[
  Claim the batch's next item (claim_next on its own).

  Input:
    KEYS[1] meta
    KEYS[2] inflight
    KEYS[3] items

    ARGV[1] run id prefix
    ARGV[2] now

  Output:
    claim_next's reply
]]
--@include ./claim-next.lua
return claim_next(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2])
