import { offersFlex } from '../../llm/offers-flex.js';
import { AgentqError } from '../../contracts/errors.js';
import type { Config } from '../../config/config.js';
import { batchCostOf, costOf, type PriceTable } from '../../llm/price-table.js';
import type { RedisConnection } from '../../redis/connect-redis.js';
import { runScript } from '../../redis/create-redis.js';
import type { Keys } from '../../store/keys.js';
import {
  choosePlan,
  type BatchMode,
  type ModeSpeeds,
  type Plan,
  type PlanInput,
  type QuestionProfile,
} from './autopilot-plan.js';
import type { AutopilotMeta } from './batch-meta.js';
import { DEFAULT_CONCURRENCY, MAX_PROVIDER_BATCH_CONCURRENCY } from './batch-schema.js';
import { RECORD_SAMPLE } from './batch-scripts.js';

/** How long a tenant's averages of a graph are kept after its last finished question. */
const STATS_SECONDS = 30 * 86_400;

/** What a plan starts from before anything is measured, and the prices it compares. */
export interface AutopilotSettings {
  inputTokens: number;
  outputTokens: number;
  calls: number;
  liveLatencyMs: number;
  flexSlowdown: number;
  batchTurnaroundMs: number;
  prices: PriceTable;
  batchPrices: PriceTable;
  /** Flex prices by model; a model without one costs half its live price (OpenAI's flex discount). @default none */
  flexPrices?: PriceTable;
  /** The model the batch's questions are priced at. @default unpriced (every mode costs 0) */
  model?: string;
  /** Whether the provider offers a flex tier: a batch's default modes include flex only then. @default false */
  flexOffered?: boolean;
}

export function autopilotSettingsOf(
  config: Pick<
    Config,
    | 'autopilotInputTokens'
    | 'autopilotOutputTokens'
    | 'autopilotCalls'
    | 'autopilotLiveLatencyMs'
    | 'autopilotFlexSlowdown'
    | 'autopilotBatchTurnaroundMs'
    | 'prices'
    | 'batchPrices'
    | 'flexPrices'
    | 'llmModel'
    | 'llmProvider'
    | 'llmFlex'
    | 'openaiBaseUrl'
  >,
): AutopilotSettings {
  return {
    inputTokens: config.autopilotInputTokens,
    outputTokens: config.autopilotOutputTokens,
    calls: config.autopilotCalls,
    liveLatencyMs: config.autopilotLiveLatencyMs,
    flexSlowdown: config.autopilotFlexSlowdown,
    batchTurnaroundMs: config.autopilotBatchTurnaroundMs,
    prices: config.prices,
    batchPrices: config.batchPrices,
    flexPrices: config.flexPrices,
    ...(config.llmModel ? { model: config.llmModel } : {}),
    // The same answer the worker's adapter gives as its `tiers` (GigaChat has no flex tier).
    flexOffered:
      config.llmProvider === 'openai' &&
      offersFlex(config.llmFlex, config.openaiBaseUrl ?? 'https://api.openai.com/v1'),
  };
}

/** One batch's question to plan: how many are left, in which modes, by when, for how much. */
export interface PlanRequest {
  tenant: string;
  graph: string;
  questions: number;
  /** The concurrency the submitter named, if any. */
  concurrency?: number;
  modes: readonly BatchMode[];
  now: number;
  deadline: number | null;
  budgetUsd: number | null;
}

/**
 * The batch autopilot's Redis side: the tenant's measured averages per graph (a rolling stat), the
 * prices of a question in each mode, and the plan a batch starts with.
 */
export class BatchAutopilotPlanner {
  constructor(private readonly options: { redis: RedisConnection; keys: Keys; settings: AutopilotSettings }) {}

  get settings(): AutopilotSettings {
    return this.options.settings;
  }

  /** A question's expected tokens and calls, and each mode's speed: measured where the tenant ran the graph, else the settings. */
  async measured(tenant: string, graph: string): Promise<{ profile: QuestionProfile; speeds: ModeSpeeds }> {
    const { settings, redis, keys } = this.options;
    const stats = await redis.hgetall(keys.autopilotStats(tenant, graph));
    const number = (field: string) => (stats[field] === undefined ? undefined : Number(stats[field]));
    const measured = Number(stats.n ?? 0) > 0;
    const liveCallMs = number('ms_live') ?? settings.liveLatencyMs;
    return {
      profile: {
        inputTokens: number('in') ?? settings.inputTokens,
        outputTokens: number('out') ?? settings.outputTokens,
        calls: Math.max(1, Math.round(number('calls') ?? settings.calls)),
        measured,
      },
      speeds: {
        liveCallMs,
        flexCallMs: number('ms_flex') ?? liveCallMs * settings.flexSlowdown,
        batchTurnaroundMs: number('ms_batch') ?? settings.batchTurnaroundMs,
      },
    };
  }

  /** USD one question costs in each mode. */
  questionCostUsd(profile: QuestionProfile): Record<BatchMode, number> {
    const { prices, batchPrices, flexPrices = {}, model } = this.options.settings;
    const usage = { inputTokens: profile.inputTokens, outputTokens: profile.outputTokens };
    return {
      live: costOf(prices, usage, model),
      flex: batchCostOf(flexPrices, prices, usage, model),
      batch: batchCostOf(batchPrices, prices, usage, model),
    };
  }

  /** Questions in flight at once in each mode: the submitter's, else a provider batch's every question. */
  concurrencyOf(asked: number | undefined, questions: number): Record<BatchMode, number> {
    const live = asked ?? DEFAULT_CONCURRENCY;
    return { live, flex: live, batch: asked ?? Math.min(questions, MAX_PROVIDER_BATCH_CONCURRENCY) };
  }

  /** The plan's input from what is measured now. */
  async input(request: PlanRequest): Promise<PlanInput> {
    const { profile, speeds } = await this.measured(request.tenant, request.graph);
    return {
      questions: request.questions,
      concurrency: this.concurrencyOf(request.concurrency, request.questions),
      modes: request.modes,
      now: request.now,
      deadline: request.deadline,
      budgetUsd: request.budgetUsd,
      profile,
      questionCostUsd: this.questionCostUsd(profile),
      speeds,
    };
  }

  /** The plan a new batch starts with; BUDGET_EXCEEDED when no allowed mode fits its budget. */
  async plan(request: PlanRequest): Promise<AutopilotMeta> {
    const input = await this.input(request);
    const chosen = choosePlan(input);
    if ('refused' in chosen) {
      const { cheapest } = chosen;
      throw new AgentqError(
        'BUDGET_EXCEEDED',
        `the batch's ${request.questions} question(s) are estimated at $${cheapest.costUsd.toFixed(4)} at the cheapest allowed mode (${cheapest.mode}), over its budget of $${request.budgetUsd}; raise budgetUsd to at least $${cheapest.costUsd.toFixed(4)}, allow a cheaper mode (modes), or send fewer questions. Nothing was created`,
        {
          details: {
            budgetUsd: request.budgetUsd,
            estimates: chosen.estimates.map((entry) => ({
              ...entry,
              finishAt: new Date(entry.finishAt).toISOString(),
            })),
          },
        },
      );
    }
    return autopilotMetaOf(input, chosen, request);
  }

  /** A finished question of the graph moves the tenant's averages. */
  async recordSample(
    tenant: string,
    graph: string,
    sample: { inputTokens: number; outputTokens: number; calls: number; mode: BatchMode; msPerCall: number },
  ): Promise<void> {
    const { redis, keys } = this.options;
    await runScript(
      redis,
      RECORD_SAMPLE,
      [keys.autopilotStats(tenant, graph)],
      [sample.inputTokens, sample.outputTokens, sample.calls, sample.mode, Math.round(sample.msPerCall), STATS_SECONDS],
    );
  }
}

/** The meta's autopilot JSON of a plan. */
export function autopilotMetaOf(
  input: PlanInput,
  plan: Plan,
  request: Pick<PlanRequest, 'deadline' | 'budgetUsd' | 'modes'>,
): AutopilotMeta {
  return {
    deadline: request.deadline,
    budgetUsd: request.budgetUsd,
    modes: [...request.modes],
    plan: { mode: plan.mode, reason: plan.reason, at: input.now },
    estimate: { costUsd: plan.estimate.costUsd, finishAt: plan.estimate.finishAt },
    flexFallback: plan.flexFallback,
    profile: input.profile,
    questionCostUsd: input.questionCostUsd,
    speeds: input.speeds,
  };
}
