// Setting declarations: read shared/config/settings/all-settings.ts first (how to add one).
import { choice, flag, integer, parsed, tableReader, text, url } from '../setting-builders.js';
import { AgentqError } from '../../contracts/errors.js';
import { defineArea, type AreaConfig } from '../settings-area.js';
import { parseContextWindows } from '../../llm/context-window.js';
import { parsePriceTable, PRICE_ENTRIES } from '../../llm/price-table.js';
import { parseRateLimits } from '../../llm/rate-limit-table.js';

/** The language model: endpoint, model ids, request limits, prices and context windows. */
export const modelArea = defineArea({
  title: 'Language models',
  intro:
    'The OpenAI-compatible endpoint the chat, embedding and moderation models are called on (OpenAI, Ollama, vLLM, llama.cpp server), or GigaChat for the chat model (docs/guides/gigachat.md), and the limits and prices of its models.',
  settings: {
    llmProvider: choice({
      env: 'LLM_PROVIDER',
      values: ['openai', 'gigachat'],
      default: 'openai',
      doc: 'Who answers the chat model (`LLM_MODEL`): `openai`, any OpenAI-compatible endpoint (`OPENAI_BASE_URL`); `gigachat`, Sber’s GigaChat API (the `GIGACHAT_*` settings). Embeddings and moderation stay on the OpenAI-compatible endpoint.',
      when: '`gigachat` with `GIGACHAT_AUTH_KEY` and e.g. `LLM_MODEL=GigaChat-2-Max`.',
    }),
    gigachatAuthKey: text({
      env: 'GIGACHAT_AUTH_KEY',
      secret: true,
      doc: 'GigaChat’s authorization key (base64 of client id and secret), sent as `Authorization: Basic` to the OAuth URL for 30-minute access tokens; required with `LLM_PROVIDER=gigachat`.',
    }),
    gigachatScope: choice({
      env: 'GIGACHAT_SCOPE',
      values: ['GIGACHAT_API_PERS', 'GIGACHAT_API_B2B', 'GIGACHAT_API_CORP'],
      default: 'GIGACHAT_API_PERS',
      doc: 'The API version the key was issued for: individuals, businesses (prepaid) or businesses (pay as you go).',
    }),
    gigachatAuthUrl: url({
      env: 'GIGACHAT_AUTH_URL',
      example: 'https://ngw.devices.sberbank.ru:9443/api/v2/oauth',
      shownDefault: '`https://ngw.devices.sberbank.ru:9443/api/v2/oauth`',
      doc: 'GigaChat’s OAuth endpoint (client credentials).',
    }),
    gigachatBaseUrl: url({
      env: 'GIGACHAT_BASE_URL',
      example: 'https://gigachat.devices.sberbank.ru/api/v1',
      shownDefault: '`https://gigachat.devices.sberbank.ru/api/v1`',
      doc: 'GigaChat’s API, up to `/api/v1`; chat requests go to `<base>/chat/completions`.',
    }),
    gigachatCaFile: text({
      env: 'GIGACHAT_CA_FILE',
      allowed: 'a path to a PEM file',
      doc: 'Certificates (PEM) trusted for the GigaChat hosts besides the system’s: GigaChat serves certificates of the Russian Trusted Root CA, which most systems do not carry.',
      when: 'Point it at the Russian Trusted Root CA (`russian_trusted_root_ca.cer`) unless the system trusts it.',
    }),
    gigachatInsecureTls: flag({
      env: 'GIGACHAT_INSECURE_TLS',
      default: false,
      doc: 'Skip the TLS certificate check on the GigaChat hosts. Anyone on the path can then read the key and the conversations.',
      when: 'Only to try GigaChat out; set `GIGACHAT_CA_FILE` instead.',
    }),
    toolExamplesInDescription: flag({
      env: 'AGENTQ_TOOL_EXAMPLES_IN_DESCRIPTION',
      default: false,
      doc: 'Tools’ examples (`defineTool({ examples })`) are written into each tool’s description for OpenAI-compatible models, which have no field for them; off, they are not sent there. GigaChat always gets them as `few_shot_examples`.',
      when: 'When a model picks a tool’s arguments poorly and its tools have examples (costs prompt tokens on every call).',
    }),
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
    llmFlex: choice({
      env: 'AGENTQ_FLEX',
      values: ['auto', 'on', 'off'],
      default: 'auto',
      doc: 'Whether the chat model’s provider offers the flex tier (`service_tier: "flex"`: cheaper, slower, refused when busy), so a batch’s plan may use it: `auto` is on for OpenAI (`api.openai.com`) and off for every other endpoint.',
      when: '`on` for an OpenAI-compatible gateway in front of OpenAI that passes `service_tier` through; `off` to keep every call at the default tier.',
    }),
    llmFlexTimeoutMs: integer({
      env: 'AGENTQ_FLEX_TIMEOUT_MS',
      min: 100,
      default: 900_000,
      doc: 'Per flex-tier model request, instead of `AGENTQ_LLM_TIMEOUT_MS`: flex requests queue at the provider (OpenAI advises 15 minutes); a slower answer fails the attempt with a retryable `TIMEOUT`.',
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
      allowed: PRICE_ENTRIES,
      doc: 'Cost table, e.g. `gpt-4o-mini:0.15:0.6:0.075,gpt-4o:2.5:10`; the optional third price is for cached input tokens (the provider’s prompt cache), the input price when absent; a dated response model uses its base id’s price; unknown models cost 0.',
      when: 'For cost figures and cost budgets.',
      read: tableReader(parsePriceTable),
    }),
    flexPrices: parsed({
      env: 'AGENTQ_FLEX_PRICES',
      default: '',
      shownDefault: 'empty (half of `AGENTQ_PRICES`)',
      allowed: PRICE_ENTRIES,
      doc: 'Flex-tier prices, e.g. `gpt-4o-mini:0.075:0.3:0.0375`; a model without an entry costs half its `AGENTQ_PRICES` price (OpenAI’s flex discount).',
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
  configOf: (values) => {
    if (values.llmProvider === 'gigachat' && values.gigachatAuthKey === undefined)
      throw new AgentqError(
        'INVALID_INPUT',
        'LLM_PROVIDER=gigachat needs GIGACHAT_AUTH_KEY: the authorization key the OAuth endpoint exchanges for access tokens',
      );
    return values;
  },
});

export type ModelConfig = AreaConfig<typeof modelArea>;
