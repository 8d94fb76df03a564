// Setting declarations: read shared/config/settings/all-settings.ts first (how to add one).
import { choice, integer, parsed, tableReader } from '../setting-builders.js';
import { defineArea, type AreaConfig } from '../settings-area.js';
import { parsePriceTable, PRICE_ENTRIES } from '../../llm/price-table.js';

/** Model calls of opted-in batches through the provider's Batch API. */
export const providerBatchArea = defineArea({
  title: 'Provider Batch API',
  intro:
    'A batch submitted with `--provider-batch` (`"providerBatch": true`) makes its model calls through the provider’s Batch API (`/v1/files` + `/v1/batches`) at batch prices: a model step parks without holding a worker, one worker at a time gathers the parked requests into provider batches, polls them and wakes each step when its answer is saved.',
  settings: {
    providerBatchMaxRequests: integer({
      env: 'AGENTQ_PROVIDER_BATCH_MAX_REQUESTS',
      min: 1,
      max: 50_000,
      default: 5000,
      doc: 'A provider batch is sent once this many requests are parked (also its largest size: OpenAI takes up to 50 000 per file).',
    }),
    providerBatchMaxBytes: integer({
      env: 'AGENTQ_PROVIDER_BATCH_MAX_BYTES',
      min: 1024,
      default: 100_000_000,
      doc: 'The largest batch input file, in bytes (OpenAI takes up to 200 MB); more requests wait for the next provider batch.',
    }),
    providerBatchFlushMs: integer({
      env: 'AGENTQ_PROVIDER_BATCH_FLUSH_MS',
      min: 0,
      default: 30_000,
      doc: 'A provider batch is sent this long after its first request parked, however few are parked (sooner when every run of the batch in flight waits).',
    }),
    providerBatchPollMs: integer({
      env: 'AGENTQ_PROVIDER_BATCH_POLL_MS',
      min: 50,
      default: 30_000,
      doc: 'How often an unfinished provider batch is asked for its status; doubled (up to 10 min) while the provider is unreachable.',
    }),
    providerBatchResultsWaitMs: integer({
      env: 'AGENTQ_PROVIDER_BATCH_RESULTS_WAIT_MS',
      min: 0,
      default: 3_600_000,
      doc: 'A finished provider batch whose results cannot be downloaded (4xx, 5xx, timeout, unreachable), or one whose status the provider refuses to show (a 4xx), is asked again with a growing delay (twice `AGENTQ_PROVIDER_BATCH_POLL_MS`, doubled up to 10 min) for this long after the first failure, its runs waiting on it; then they fail with `PROVIDER_BATCH_RESULTS_UNAVAILABLE`. Its requests are never sent again in another provider batch for this (the provider may have answered and charged them).',
    }),
    providerBatchLeaseMs: integer({
      env: 'AGENTQ_PROVIDER_BATCH_LEASE_MS',
      min: 300,
      max: 600_000,
      default: 5000,
      doc: 'The collector’s lease: one worker at a time collects, renewing it every third of this (also while it waits on the provider), so a dead collector’s provider batches move on within this long. A collector that took over searches the provider’s batch list before creating one the dead one may have created.',
    }),
    providerBatchParkMs: integer({
      env: 'AGENTQ_PROVIDER_BATCH_PARK_MS',
      min: 1000,
      default: 600_000,
      doc: 'A parked step looks again after this long even if nobody woke it (a wake-up lost with a killed worker); it normally wakes as soon as its answer is saved.',
    }),
    providerBatchFallback: choice({
      env: 'AGENTQ_PROVIDER_BATCH_FALLBACK',
      values: ['none', 'live'],
      default: 'none',
      doc: '`live`: a batch asked for the Batch API on a provider without one runs live, and requests of an expired provider batch are called live; `none`: refused at submission, and expired requests go in a new provider batch.',
    }),
    batchPrices: parsed({
      env: 'AGENTQ_BATCH_PRICES',
      default: '',
      shownDefault: 'empty (half of `AGENTQ_PRICES`)',
      allowed: PRICE_ENTRIES,
      doc: 'Batch API prices, e.g. `gpt-4o-mini:0.075:0.3:0.0375`; a model without an entry costs half its `AGENTQ_PRICES` price (the Batch API discount).',
      read: tableReader(parsePriceTable),
    }),
  },
});

export type ProviderBatchConfig = AreaConfig<typeof providerBatchArea>;
