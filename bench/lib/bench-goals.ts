/** A figure's goal: the bound it must stay within to count as met (and the README's earlier targets). */
export interface Goal {
  op: '>=' | '<=';
  value: number;
}

/**
 * Goals by figure name. Figures without an entry are context (rates, latencies of one setting) and have
 * no pass/fail. Booleans are 1/0, so `inflight_10000_ok` must be ≥ 1.
 */
export const GOALS: Readonly<Record<string, Goal>> = {
  engine_vs_bullmq_chain_r100: { op: '>=', value: 0.7 },
  redis_usec_per_step: { op: '<=', value: 300 },
  transition_growth_200: { op: '<=', value: 1.2 },
  engine_vs_langgraph_sqlite_r1: { op: '>=', value: 1 },
  // "Redis ≤ 5 KB per parked run, history aside", in bytes (5 KiB).
  redis_bytes_per_inflight_run: { op: '<=', value: 5120 },
  inflight_10000_ok: { op: '>=', value: 1 },
  recovery_p95_s: { op: '<=', value: 5 },
  // A step re-delivered after a kill never pays again for a call whose answer was saved.
  recovery_duplicate_model_calls: { op: '<=', value: 0 },
  capacity_duplicate_model_calls: { op: '<=', value: 0 },
  batch_wall_vs_floor: { op: '<=', value: 1.15 },
  // A provider batch's model calls make no live request, hold no worker while they wait, go in
  // one provider batch per model turn, and cost half.
  pb_live_chat_requests: { op: '<=', value: 0 },
  pb_slots_held_while_waiting: { op: '<=', value: 0 },
  pb_provider_batches_beyond_turns: { op: '<=', value: 0 },
  pb_cost_vs_live: { op: '<=', value: 0.51 },
  // Live tokens add little latency and nothing durable.
  ttft_overhead_ms_p95: { op: '<=', value: 20 },
  durable_bytes_per_token: { op: '<=', value: 0 },
  cli_cold_start_ms_help: { op: '<=', value: 300 },
  cli_cold_start_ms_search: { op: '<=', value: 300 },
  cli_cold_start_ms_status: { op: '<=', value: 300 },
};

export const goalText = (goal: Goal | undefined): string =>
  goal ? `${goal.op === '>=' ? '≥' : '≤'} ${goal.value}` : '';

/** Whether `value` meets `goal`; undefined when there is no goal. NaN never meets one. */
export function meetsGoal(value: number, goal: Goal | undefined): boolean | undefined {
  if (!goal) return undefined;
  return goal.op === '>=' ? value >= goal.value : value <= goal.value;
}
