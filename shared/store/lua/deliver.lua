--[[
  Fragment, included with --@include: deliver; the placeholder RUN_KEYS is the Lua table of a run's keys built from `base`. No KEYS or ARGV of its own.

  BEGIN for a job a script hands out: its run's keys are built from the job's data (a step job carries
  its run id), so the worker gets the cursor, meta, state and memos with the job itself. → BEGIN's reply,
  or false for a job that is not a well-formed step job (the worker then reads it the slow way).
]]
local function deliver(fetched, now, maxlen, run_prefix, cached, fresh)
  local data, atm = bullmq_job_data(fetched)
  if not data then return false end
  local ok, d = pcall(cjson.decode, data)
  if not ok or type(d) ~= 'table' or type(d.runId) ~= 'string' or type(d.superstep) ~= 'number' or type(d.task) ~= 'number' then return false end
  local base = run_prefix .. d.runId
  local rk = {{RUN_KEYS}}
  local start = cjson.encode({node = d.node, superstep = d.superstep, task = d.task, attempt = (tonumber(atm) or 0) + 1})
  return begin_step(rk, d.superstep, d.task, now, maxlen, start, cached, fresh)
end
