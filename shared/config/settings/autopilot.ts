// Setting declarations: read shared/config/settings/all-settings.ts first (how to add one).
import { decimal, integer } from '../setting-builders.js';
import { defineArea, type AreaConfig } from '../settings-area.js';

/** The defaults a batch's plan starts from before it has measured anything. */
export const autopilotArea = defineArea({
  title: 'Batch autopilot',
  intro:
    'A batch submitted with a `deadline` or a `budgetUsd` is planned: agentq estimates what each mode (live, flex, provider batch) would cost and how long it would take, and picks the cheapest that meets the deadline (docs/guides/batches.md). The estimates use the averages of the tenant’s earlier runs of the same graph when there are some, else these defaults.',
  settings: {
    autopilotInputTokens: integer({
      env: 'AGENTQ_AUTOPILOT_INPUT_TOKENS',
      min: 1,
      default: 3000,
      doc: 'Prompt tokens one question is assumed to send in all its model calls, before any run of its graph was measured.',
    }),
    autopilotOutputTokens: integer({
      env: 'AGENTQ_AUTOPILOT_OUTPUT_TOKENS',
      min: 1,
      default: 400,
      doc: 'Output tokens one question is assumed to take in all its model calls, before any run of its graph was measured.',
    }),
    autopilotCalls: integer({
      env: 'AGENTQ_AUTOPILOT_CALLS',
      min: 1,
      max: 100,
      default: 3,
      doc: 'Model calls one question is assumed to make one after another (a provider batch answers one of them per turnaround), before any run of its graph was measured.',
    }),
    autopilotLiveLatencyMs: integer({
      env: 'AGENTQ_AUTOPILOT_LIVE_LATENCY_MS',
      min: 1,
      default: 5000,
      doc: 'How long one live model call is assumed to take, before any live run of the graph was measured; a live batch is assumed to answer `concurrency` questions at a time.',
    }),
    autopilotFlexSlowdown: decimal({
      env: 'AGENTQ_AUTOPILOT_FLEX_SLOWDOWN',
      min: 1,
      max: 100,
      default: 3,
      doc: 'How many times slower than live a flex call is assumed to be, before any flex run of the graph was measured.',
    }),
    autopilotBatchTurnaroundMs: integer({
      env: 'AGENTQ_AUTOPILOT_BATCH_TURNAROUND_MS',
      min: 1,
      default: 3_600_000,
      doc: 'How long the provider is assumed to take to answer one provider batch (OpenAI promises 24 h and usually takes less); a question waits one turnaround per model call. A provider batch slower than this, measured, makes the plan re-plan.',
    }),
  },
});

export type AutopilotConfig = AreaConfig<typeof autopilotArea>;
