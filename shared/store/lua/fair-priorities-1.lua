--[[
  Weighted fairness for step jobs added from TypeScript (StepJobs: a run taken in from a raw job, the
  reconciler's re-adds): the priorities `count` jobs of a tenant get (fair_priorities, fair-pass.lua),
  their passes taken. The step transition and the producer's enqueue decide in their own scripts.

  KEYS: 1 the shard's fair hash (FairQueue.key; the shard queue's keys share its hash tag)
  ARGV: 1 the shard queue's key prefix · 2 tenant · 3 weight · 4 the run's own priority (0 none) · 5 count
  → the priorities, in order (0: none, the queue had nothing waiting)

  KEYS[1] the shard's fair hash
  BULLMQ: the placeholder is the Lua of the BullMQ seam's helpers (bullmqLua)
]]
{{BULLMQ}}
--@include ./fair-pass.lua
return fair_priorities(KEYS[1], bullmq_queue_keys(ARGV[1]), ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]))
