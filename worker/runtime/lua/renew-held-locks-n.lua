--[[
  Renew the job locks this process holds, each only while it still holds the process's token (the
  liveness thread's beat, liveness-beat.ts). Any number of locks: KEYS and ARGV pair by position.

  Input:
    KEYS[1..n] the job locks

    ARGV[1] the lock duration (ms)
    ARGV[2..n+1] the token each lock must still hold

  Output:
    1
]]
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[i + 1] then redis.call('PEXPIRE', KEYS[i], ARGV[1]) end
end
return 1
