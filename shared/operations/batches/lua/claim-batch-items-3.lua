--[[
  Claim up to a number of the batch's next items at once (claim_next in turn), so the free slots of a
  batch (its first wave) are filled by runs started side by side, not one claim and one start after another.

  Input (claim-batch-item-3.lua's, and a count):
    KEYS[1] meta
    KEYS[2] inflight
    KEYS[3] items

    ARGV[1] run id prefix
    ARGV[2] now
    ARGV[3] most items to claim

  Output:
    {{index, item JSON}, …, the batch's meta as HGETALL (after the claims)} — or, when claim_next stopped
    first, that stop's code in place of the meta ({-1} not running | {-2} all dispatched | {-3} no free
    slot | {-4} items deferred)
]]
--@include ./claim-next.lua
local claims = {}
for _ = 1, tonumber(ARGV[3]) do
  local claim = claim_next(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2])
  if claim[1] < 0 then
    claims[#claims + 1] = claim[1]
    return claims
  end
  claims[#claims + 1] = {claim[1], claim[2]}
end
claims[#claims + 1] = redis.call('HGETALL', KEYS[1])
return claims
