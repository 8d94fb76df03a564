--[[
  Fragment, included with --@include: step_job_opts. No KEYS or ARGV of its own.

  A step job's options (BullMQ's JobsOptions names): its deterministic id, its attempts, agentq's backoff, its priority if any.
]]
local function step_job_opts(job, priority)
  local opts = {jobId = job[1], attempts = job[4], backoff = {type = 'agentq'}}
  if priority > 0 then opts.priority = priority end
  return opts
end
