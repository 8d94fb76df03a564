/** When one node execution started and ended (`performance.now()` of the process that ran it). */
export interface StepTiming {
  superstep: number;
  startedAt: number;
  endedAt: number;
}

/** A sequential run's steps by superstep. */
function ordered(timings: readonly StepTiming[]): StepTiming[] {
  return [...timings].sort((a, b) => a.superstep - b.superstep);
}

/**
 * Per superstep k: the gap from step k's node end to step k+1's node start (commit, hand-off, pick-up),
 * indexed by k so a caller can compare early and late steps of one run.
 */
export function transitions(timings: readonly StepTiming[]): number[] {
  const steps = ordered(timings);
  const result: number[] = [];
  for (let k = 0; k + 1 < steps.length; k += 1)
    result[steps[k]!.superstep] = steps[k + 1]!.startedAt - steps[k]!.endedAt;
  return result;
}

/**
 * Step latency: from one step's node end to the next step's node end, so it counts the hand-off and
 * the whole next node (its model call included). The first step of a run has no predecessor and is
 * left out, so intake or graph start-up is not counted as a step.
 */
export function stepLatencies(timings: readonly StepTiming[]): number[] {
  const steps = ordered(timings);
  const result: number[] = [];
  for (let k = 1; k < steps.length; k += 1) result.push(steps[k]!.endedAt - steps[k - 1]!.endedAt);
  return result;
}
