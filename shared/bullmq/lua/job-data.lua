--[[
  Fragment, included by bullmqLua (bullmq-lua.ts): bullmq_job_data. No KEYS or ARGV of its own: it takes a queue's
  named keys (bullmq_queue_keys).

  A job as moveToActive or moveToFinished hand it out ([hash pairs, id, …]): its data and attemptsMade (atm), or nil.
]]
local function bullmq_job_data(fetched)
  local fields = fetched[1]
  if type(fields) ~= 'table' then return nil end
  local data, atm
  for i = 1, #fields, 2 do
    if fields[i] == 'data' then data = fields[i + 1] elseif fields[i] == 'atm' then atm = fields[i + 1] end
  end
  return data, atm
end
