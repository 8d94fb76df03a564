--[[
  Save a step's results and end the claim of the call that produced them, in one script, unless the run
  has finished or is gone.
  KEYS: 1 the run's memo hash · 2 its meta · ARGV: 1 step id · 2 the step's results JSON · 3 claim field ('' none)
    · 4 claimant
  → 1 saved | 'ended' (the run finished or is gone: nothing written)

  KEYS[1] the run's memo hash
  KEYS[2] the run's meta
]]
--@include ./save-paid-function.lua

if not save_paid(KEYS[2], KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4]) then return 'ended' end
return 1
