--[[
  Fragment, included with --@include: start_task. No KEYS or ARGV of its own.

  The start of a step that will run: marks a queued run running (run-start), emits step-start and
  replies with what the step reads. m: the run's STEP_META_FIELDS (HMGET), checked by the caller.
  skip_state: the caller holds the state at this cursor already (its cache), so none is sent.
]]
local function start_task(rk, m, superstep, task, now, maxlen, start_data, skip_state, fresh)
  if m[1] == 'queued' then
    redis.call('HSET', rk[1], 'status', 'running', 'startedAt', now, 'updatedAt', now)
    run_event(rk, maxlen, 'run-start', '{}')
    m[1] = 'running'
  end
  run_event(rk, maxlen, 'step-start', start_data)
  local state = false
  if not skip_state then
    -- The state as one JSON object: its fields hold JSON already, so they go in as they are, and the
    -- worker decodes one string instead of a reply of 2n bulk strings (measured: a step's largest reply).
    local s = redis.call('HGETALL', rk[2])
    local fields = {}
    for i = 1, #s, 2 do fields[#fields + 1] = cjson.encode(s[i]) .. ':' .. s[i + 1] end
    state = '{' .. table.concat(fields, ',') .. '}'
  end
  -- The step's memos (saved paid work of an earlier attempt) come along, so a model call needs no read.
  -- fresh: no attempt of this step began before (its superstep was reached in the calling script).
  return {'run', 'running', cjson.encode(m), state, not fresh and redis.call('HGET', rk[7], 's' .. superstep .. '.t' .. task) or false}
end
