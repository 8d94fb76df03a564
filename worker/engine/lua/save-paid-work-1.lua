--[[
  Save a step's results and end the claim of the call that produced them, in one script.
  KEYS: 1 the run's memo hash · ARGV: 1 step id · 2 the step's results JSON · 3 claim field ('' none) · 4 claimant

  KEYS[1] the run's memo hash
]]
--@include ./save-paid-function.lua

save_paid(KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4])
return 1
