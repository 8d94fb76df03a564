/**
 * The batch autopilot's arithmetic, without Redis: what each mode would cost and when it would finish,
 * and which one a batch uses. The dispatcher plans with it at submission, the provider-batch collector
 * again as it measures (autopilot-replan.ts).
 */
export const BATCH_MODES = ['live', 'flex', 'batch'] as const;
export type BatchMode = (typeof BATCH_MODES)[number];

/** What one question is expected to take: tokens over all its model calls, and how many calls in a row. */
export interface QuestionProfile {
  inputTokens: number;
  outputTokens: number;
  calls: number;
  /** Whether the figures were measured on the tenant's earlier runs of the graph, or are the settings' defaults. */
  measured: boolean;
}

/** How fast each mode goes: one call's time live and flex, one provider batch's turnaround. */
export interface ModeSpeeds {
  liveCallMs: number;
  flexCallMs: number;
  batchTurnaroundMs: number;
}

export interface PlanInput {
  /** Questions not answered yet. */
  questions: number;
  /** Questions in flight at once, by mode (a provider batch's waiting runs hold no worker: all of them). */
  concurrency: Record<BatchMode, number>;
  modes: readonly BatchMode[];
  now: number;
  /** ms since the epoch, or null: no deadline. */
  deadline: number | null;
  /** USD the batch may still spend, or null: no budget. */
  budgetUsd: number | null;
  profile: QuestionProfile;
  /** USD one question costs in each mode. */
  questionCostUsd: Record<BatchMode, number>;
  speeds: ModeSpeeds;
}

export interface ModeEstimate {
  mode: BatchMode;
  costUsd: number;
  /** ms since the epoch. */
  finishAt: number;
}

export interface Plan {
  mode: BatchMode;
  reason: string;
  estimate: ModeEstimate;
  /** Every allowed mode's estimate, cheapest first. */
  estimates: ModeEstimate[];
  /** What a refused flex call does: sent live (the deadline needs it), or retried on flex with backoff. */
  flexFallback: 'live' | 'retry';
}

/** The cheapest estimate is over the budget in every mode: nothing can be planned. */
export interface Refusal {
  refused: true;
  cheapest: ModeEstimate;
  estimates: ModeEstimate[];
}

/** Each allowed mode's cost and finish time for the questions left. */
export function estimateModes(input: PlanInput): ModeEstimate[] {
  const { questions, profile, speeds, now } = input;
  return input.modes
    .map((mode) => {
      const waves = Math.ceil(questions / Math.max(1, input.concurrency[mode]));
      const perCall =
        mode === 'live' ? speeds.liveCallMs : mode === 'flex' ? speeds.flexCallMs : speeds.batchTurnaroundMs;
      return {
        mode,
        costUsd: questions * input.questionCostUsd[mode],
        finishAt: now + waves * Math.max(1, profile.calls) * perCall,
      };
    })
    .sort((a, b) => a.costUsd - b.costUsd || a.finishAt - b.finishAt);
}

/**
 * The cheapest mode within the budget that finishes by the deadline; when none within the budget
 * finishes in time, the fastest within the budget (its reason says the deadline will be missed). A
 * refusal when every mode's estimate is over the budget.
 */
export function choosePlan(input: PlanInput): Plan | Refusal {
  const estimates = estimateModes(input);
  const { budgetUsd, deadline } = input;
  const affordable = budgetUsd === null ? estimates : estimates.filter((entry) => entry.costUsd <= budgetUsd);
  if (affordable.length === 0) return { refused: true, cheapest: estimates[0]!, estimates };
  const inTime = deadline === null ? affordable : affordable.filter((entry) => entry.finishAt <= deadline);
  const others = estimates.map((entry) => `${entry.mode} ${describe(entry)}`).join(', ');
  let chosen: ModeEstimate;
  let why: string;
  if (inTime.length > 0) {
    chosen = inTime[0]!;
    why = deadline === null ? 'cheapest mode' : 'cheapest mode that meets the deadline';
  } else {
    chosen = [...affordable].sort((a, b) => a.finishAt - b.finishAt)[0]!;
    why = `no mode${budgetUsd === null ? '' : ' within the budget'} meets the deadline: the fastest`;
  }
  const flex = estimates.find((entry) => entry.mode === 'flex');
  // A refused flex call is sent live when flex alone would use more than half of the time left: retries
  // with backoff could then miss the deadline.
  const tight = deadline !== null && flex !== undefined && (flex.finishAt - input.now) * 2 > deadline - input.now;
  return {
    mode: chosen.mode,
    reason: `${why} (${others}; ${input.questions} question(s), ${profile(input.profile)})`,
    estimate: chosen,
    estimates,
    flexFallback: tight && input.modes.includes('live') ? 'live' : 'retry',
  };
}

function describe(entry: ModeEstimate): string {
  return `$${entry.costUsd.toFixed(4)} by ${new Date(entry.finishAt).toISOString()}`;
}

function profile({ inputTokens, outputTokens, calls, measured }: QuestionProfile): string {
  return `${Math.round(inputTokens)} in + ${Math.round(outputTokens)} out tokens and ${calls} call(s) per question, ${measured ? 'measured' : 'assumed'}`;
}

/**
 * A batch's `deadline` as ms since the epoch: an ISO 8601 time, or a duration from `now` (`45s`, `90m`,
 * `6h`, `2d`); undefined when it is neither.
 */
export function parseDeadline(text: string, now: number): number | undefined {
  const duration = /^(\d+(?:\.\d+)?)(s|m|h|d)$/.exec(text.trim());
  if (duration) {
    const unit = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[duration[2] as 's' | 'm' | 'h' | 'd'];
    return now + Math.round(Number(duration[1]) * unit);
  }
  if (!/^\d{4}-\d{2}-\d{2}T/.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isFinite(at) ? at : undefined;
}
