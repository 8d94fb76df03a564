--[[
  Fragment, included with --@include: charge, defer_charges, flush_charges, know_ledger, release_at,
  keep_charged. No KEYS or ARGV of its own.

  The tenant's storage ledger on the run's shard (Keys.tenantRunStorage): the run's meta field `ledger`,
  set when the run is created, names it; `<ledger>:bytes` is the tenant's total there, `<ledger>:charges`
  each run's bytes by its meta key, `<ledger>:expiry` when a run's bytes leave Redis (ms). Every script
  that stores a run's bytes charges them here in the same call, so the count is never behind what Redis
  keeps; StorageBudget takes expired charges out and checks the total when a run or document is admitted.
  A run created before the ledger existed has no `ledger` field and is not counted.
]]
local ledgers = {}
local function ledger_of(rk)
  local ledger = ledgers[rk[1]]
  if ledger == nil then
    ledger = redis.call('HGET', rk[1], 'ledger') or false
    ledgers[rk[1]] = ledger
  end
  return ledger
end
-- The run's ledger as the script read it with other meta fields (its `ledger` field, or nil): not read again.
local function know_ledger(rk, ledger)
  ledgers[rk[1]] = ledger or false
end
-- Charges a script defers (defer_charges) are summed per run and written by its flush_charges, still in the
-- same script: a step's transition charges its events, commit and recording in two calls instead of two each.
local deferred_charges = false
-- Charges the run `bytes` more (a negative count gives some back: a state field replaced by a shorter one).
local function charge(rk, bytes)
  if bytes == 0 then return end
  if deferred_charges then
    local pending = deferred_charges[rk[1]]
    if pending then pending.bytes = pending.bytes + bytes else deferred_charges[rk[1]] = {rk = rk, bytes = bytes} end
    return
  end
  local ledger = ledger_of(rk)
  if not ledger then return end
  redis.call('HINCRBY', ledger .. ':charges', rk[1], bytes)
  redis.call('INCRBY', ledger .. ':bytes', bytes)
end
-- From here on, charges wait for flush_charges: a script that defers them flushes before each of its returns.
local function defer_charges()
  deferred_charges = deferred_charges or {}
end
local function flush_charges()
  local pending = deferred_charges
  deferred_charges = false
  if pending then for _, run in pairs(pending) do charge(run.rk, run.bytes) end end
end
-- The run's keys expire in `seconds`: its bytes leave the count then (Redis's clock, as EXPIRE's).
local function release_at(rk, seconds)
  local ledger = ledger_of(rk)
  if not ledger then return end
  local t = redis.call('TIME')
  local at = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(seconds) * 1000
  redis.call('ZADD', ledger .. ':expiry', at, rk[1])
end
-- The run's keys no longer expire (a retry): its bytes stay counted.
local function keep_charged(rk)
  local ledger = ledger_of(rk)
  if ledger then redis.call('ZREM', ledger .. ':expiry', rk[1]) end
end
-- Bytes of args[from .. from + count - 1].
local function bytes_of(args, from, count)
  local sum = 0
  for i = from, from + count - 1 do sum = sum + #args[i] end
  return sum
end
