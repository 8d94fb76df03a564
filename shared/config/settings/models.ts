// Setting declarations: read shared/config/settings/all-settings.ts first (how to add one).
import { flag, integer, parsed, tableReader, text, url } from '../setting-builders.js';
import { defineArea, type AreaConfig } from '../settings-area.js';
import { parseContextWindows } from '../../llm/context-window.js';
import { parsePriceTable } from '../../llm/price-table.js';
import { parseRateLimits } from '../../llm/rate-limit-table.js';

/** The language model: endpoint, model ids, request limits, prices and context windows. */
export const modelArea = defineArea({
  title: 'Language models',
  intro:
    'The OpenAI-compatible endpoint the chat, embedding and moderation models are called on (OpenAI, Ollama, vLLM, llama.cpp server), and the limits and prices of its models.',
  settings: {
    openaiBaseUrl: url({
      env: 'OPENAI_BASE_URL',
      example: 'http://localhost:11434/v1',
      shownDefault: 'OpenAI (`https://api.openai.com/v1`)',
      doc: 'Any OpenAI-compatible endpoint: Ollama `http://localhost:11434/v1`, vLLM `http://host:8000/v1`, llama.cpp server `http://host:8080/v1`.',
    }),
    openaiApiKey: text({
      env: 'OPENAI_API_KEY',
      secret: true,
      doc: 'Bearer key for that endpoint; local servers need none.',
    }),
    llmModel: text({
      env: 'LLM_MODEL',
      doc: 'Chat model id (e.g. `gpt-4o-mini`, `llama3.2`). Unset: no language model; LLM graphs fail with a message saying to set it.',
    }),
    llmTimeoutMs: integer({
      env: 'AGENTQ_LLM_TIMEOUT_MS',
      min: 100,
      default: 60_000,
      doc: 'Per model request; a slower answer fails the attempt with a retryable `TIMEOUT` (the step’s retry policy retries it).',
      when: 'Raise it for slow local models and long answers.',
    }),
    llmStream: flag({
      env: 'AGENTQ_LLM_STREAM',
      default: true,
      doc: 'Model requests stream (`stream: true`, usage from the last chunk): tokens reach SSE subscribers live over Redis pub/sub; the committed message stays the record.',
      when: '`false` for a server that cannot stream.',
    }),
    llmMaxTokens: integer({
      env: 'AGENTQ_LLM_MAX_TOKENS',
      min: 1,
      shownDefault: 'unset (the provider’s limit)',
      doc: '`max_tokens` sent with every model request; also counted by the token-budget check before each call.',
    }),
    moderationModel: text({
      env: 'MODERATION_MODEL',
      doc: 'Moderation model on the same endpoint (`/v1/moderations`), e.g. `omni-moderation-latest`: enables the `moderation` guardrail. Unset: runs naming that guardrail fail with `INVALID_INPUT`.',
    }),
    embedBatchSize: integer({
      env: 'AGENTQ_EMBED_BATCH_SIZE',
      min: 1,
      default: 128,
      doc: 'Texts per `/v1/embeddings` request; longer lists are sent as several requests.',
    }),
    rateLimits: parsed({
      env: 'AGENTQ_RATE_LIMITS',
      default: '',
      shownDefault: 'empty (unlimited)',
      allowed: '`<model>:<requests/min>:<tokens/min>` entries separated by commas',
      doc: 'Provider limits shared by all workers, `*` for every model without its own entry, `0` = unlimited, e.g. `gpt-4o-mini:500:200000,*:60:0`. A request over the limit waits (the step is delayed, no attempt spent).',
      when: 'When the provider answers 429: set its limits here, and the workers queue instead of failing.',
      read: tableReader(parseRateLimits),
    }),
    prices: parsed({
      env: 'AGENTQ_PRICES',
      default: '',
      shownDefault: 'empty (every model costs 0)',
      allowed: '`<model>:<input USD per 1M tokens>:<output USD per 1M tokens>` entries separated by commas',
      doc: 'Cost table, e.g. `gpt-4o-mini:0.15:0.6,gpt-4o:2.5:10`; a dated response model uses its base id’s price; unknown models cost 0.',
      when: 'For cost figures and cost budgets.',
      read: tableReader(parsePriceTable),
    }),
    contextWindow: integer({
      env: 'AGENTQ_CONTEXT_WINDOW',
      min: 256,
      default: 8192,
      doc: 'Context window (tokens) of models without an entry in `AGENTQ_CONTEXT_WINDOWS`.',
    }),
    contextWindows: parsed({
      env: 'AGENTQ_CONTEXT_WINDOWS',
      default: '',
      allowed: '`<model>:<tokens>` entries separated by commas',
      doc: 'Context windows by model, e.g. `gpt-4o-mini:128000,llama3.2:131072`.',
      when: 'For models whose window differs from `AGENTQ_CONTEXT_WINDOW`: summaries start later on larger windows.',
      read: tableReader(parseContextWindows),
    }),
    traceContent: flag({
      env: 'AGENTQ_TRACE_CONTENT',
      default: false,
      doc: 'Record prompts, responses, tool arguments and results in spans; off, spans carry only models, token counts, tool names and ids.',
      when: 'While debugging, where the trace store may hold the runs’ data.',
    }),
  },
});

export type ModelConfig = AreaConfig<typeof modelArea>;
