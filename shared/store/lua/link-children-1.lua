--[[
  A parent's step links the child runs it starts (before it creates them), or waits again on children
  whose end it has already counted (a retried child running again).

  Input:
    KEYS[1] the parent run's memo hash

    ARGV[1] the parent's step id (`s<k>.t<i>`)
    ARGV[2] 'link' or 'rearm'
    ARGV[3..] 'link': triples child run id, its link as JSON, '1' when the step waits for it;
              'rearm': child run ids

  Output:
    how many awaited children of the step have not ended yet (its `child-waits:<step>` count)

  Fields: `child:<id>` the link (set once: a step run again adds nothing), `children` how many links,
  `child-wait:<id>` the step waiting for that child until its end is counted, `child-waits:<step>`
  how many such children the step has. A child is counted as awaited once per end, whoever links it.
]]
local step = ARGV[1]
local counter = 'child-waits:' .. step
local function await(id)
  if redis.call('HSETNX', KEYS[1], 'child-wait:' .. id, step) == 1 then
    redis.call('HINCRBY', KEYS[1], counter, 1)
  end
end
if ARGV[2] == 'link' then
  for i = 3, #ARGV, 3 do
    if redis.call('HSETNX', KEYS[1], 'child:' .. ARGV[i], ARGV[i + 1]) == 1 then
      redis.call('HINCRBY', KEYS[1], 'children', 1)
      if ARGV[i + 2] == '1' then await(ARGV[i]) end
    end
  end
else
  for i = 3, #ARGV do await(ARGV[i]) end
end
return tonumber(redis.call('HGET', KEYS[1], counter) or '0')
