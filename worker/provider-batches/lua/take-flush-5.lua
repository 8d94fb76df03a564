--[[
  Takes the oldest pending calls of one model into a new flush (the intent of one provider batch,
  recorded before anything is uploaded): at most ARGV[1] calls and ARGV[2] bytes of request lines (at
  least one call, whatever its size). A call goes into one flush only: it leaves `pending` here. Its
  time is Redis's (TIME), not the calling worker's: another worker's lease reads it again, and looks for
  this flush's provider batch among those created since then.
  KEYS: 1 pending · 2 calls · 3 bodies · 4 the new flush's hash · 5 flushes
  ARGV: 1 max requests · 2 max bytes · 3 flush id
  → the number of calls taken (0: none pending)

  KEYS[1..5] as listed above: pending, calls, bodies, the new flush's hash, flushes
]]
local ids = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[1]) - 1)
local model = nil
local taken = {}
local bytes = 0
for _, id in ipairs(ids) do
  local raw = redis.call('HGET', KEYS[2], id)
  local size = redis.call('HSTRLEN', KEYS[3], id)
  if not raw or size == 0 then
    redis.call('ZREM', KEYS[1], id)
  else
    local call = cjson.decode(raw)
    if model == nil then model = call.m end
    if call.m == model then
      if #taken > 0 and bytes + size + 1 > tonumber(ARGV[2]) then break end
      bytes = bytes + size + 1
      taken[#taken + 1] = id
    end
  end
end
if #taken == 0 then return 0 end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
for _, id in ipairs(taken) do
  local call = cjson.decode(redis.call('HGET', KEYS[2], id))
  redis.call('ZREM', KEYS[1], id)
  redis.call('HSET', KEYS[2], id, cjson.encode({s = 'assigned', m = model, at = call.at, f = ARGV[3]}))
end
redis.call('HSET', KEYS[4], 'id', ARGV[3], 'state', 'intent', 'model', model, 'ids', cjson.encode(taken),
  'requests', #taken, 'bytes', bytes, 'createdAt', now, 'updatedAt', now, 'creates', 0)
redis.call('ZADD', KEYS[5], now, ARGV[3])
return #taken
