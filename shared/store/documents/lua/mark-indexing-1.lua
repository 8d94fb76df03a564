--[[
  Set a document's status to `indexing` while the hash is the latest version's.

  Input:
    KEYS[1] record

    ARGV[1] content hash
    ARGV[2] now (ISO)

  Output:
    0
]]
if redis.call('HGET', KEYS[1], 'pendingHash') == ARGV[1] then
  redis.call('HSET', KEYS[1], 'status', 'indexing', 'updatedAt', ARGV[2])
end
return 0
