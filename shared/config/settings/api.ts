// Setting declarations: read shared/config/settings/all-settings.ts first (how to add one).
import { flag, integer, matching, parsed, quoteValue, text, url, type Read } from '../setting-builders.js';
import { defineArea, type AreaConfig } from '../settings-area.js';
import { parseTenantBudgetLimits, type TenantBudgetLimits } from '../tenant-budget-limits.js';
import { readTenantPolicyFile, type TenantPolicyFile } from '../tenant-policy.js';
import { parseTenantWeights, type TenantWeights } from '../tenant-weights.js';

/** The HTTP API: where it listens, who may call it, the limits per caller and tenant, the dashboard. */
export const apiArea = defineArea({
  title: 'HTTP API, tenants and dashboard',
  intro:
    'Where the API listens, who may call it, and the limits per key and tenant. The tenant limits are read wherever runs are created: clients, API and workers.',
  settings: {
    port: integer({ env: 'PORT', min: 0, max: 65_535, default: 3000, doc: 'API listen port.' }),
    host: text({
      env: 'HOST',
      default: '127.0.0.1',
      doc: 'API listen address; forced to loopback while no API key is configured.',
      when: '`0.0.0.0` to serve other machines (needs API keys).',
    }),
    apiKeys: text({
      env: 'AGENTQ_API_KEYS',
      secret: true,
      allowed: '`<key>:<tenant>:<role>` entries separated by commas',
      doc: 'API keys: `<key>:<tenant>:<role>,…` (roles `producer`, `admin`; each key at least 16 characters, e.g. `openssl rand -hex 24`); unset: the API runs open on loopback only, and says so.',
      when: 'Before the API serves anything but this machine.',
    }),
    apiKeysFile: text({
      env: 'AGENTQ_API_KEYS_FILE',
      allowed: 'a file path',
      doc: 'A file of the same entries, one per line or comma-separated.',
      when: 'To keep keys out of the environment (a mounted secret).',
    }),
    callbackSecret: matching({
      env: 'AGENTQ_CALLBACK_SECRET',
      secret: true,
      pattern: /^\S{32,}$/,
      allowed: 'at least 32 characters (e.g. `openssl rand -hex 32`)',
      doc: 'Signs the callback URLs of `context.callback` (HMAC-SHA256); the same value on workers and API. Unset: a node asking for a callback URL fails, naming this setting.',
      when: 'Before a node hands out callback URLs; changing it voids the URLs handed out.',
    }),
    publicUrl: url({
      env: 'AGENTQ_PUBLIC_URL',
      example: 'https://agentq.example.com',
      shownDefault: '`http://<HOST>:<PORT>`',
      doc: 'The API’s address as third parties reach it: the base of callback URLs (`<AGENTQ_PUBLIC_URL>/v1/callbacks/<token>`).',
      when: 'Whenever the API is behind a proxy or on another machine than the workers.',
    }),
    bodyLimitBytes: integer({
      env: 'AGENTQ_BODY_LIMIT_BYTES',
      min: 1024,
      default: 1024 * 1024,
      shownDefault: '`1048576` (1 MiB)',
      doc: 'Larger request bodies get 413.',
      when: 'Raise it for large run inputs.',
    }),
    rateLimitPerMinute: integer({
      env: 'AGENTQ_RATE_LIMIT_PER_MINUTE',
      min: 0,
      default: 600,
      doc: 'Requests per API key per minute (429 with `Retry-After`); 0 = unlimited.',
    }),
    tenantMaxInflight: integer({
      env: 'AGENTQ_TENANT_MAX_INFLIGHT',
      min: 0,
      default: 1000,
      doc: 'Unfinished runs per tenant (429 with `Retry-After`); 0 = unlimited.',
    }),
    tenantFairShare: integer({
      env: 'AGENTQ_TENANT_FAIR_SHARE',
      min: 0,
      default: 50,
      doc: 'A tenant’s unfinished runs (batch questions aside) beyond which its new runs queue behind other tenants’ (their BullMQ priority is raised by 1000 per whole share held); 0 = off.',
      when: 'Lower it when one tenant’s bursts delay the others; 0 for a single tenant.',
    }),
    tenantWeights: parsed({
      env: 'AGENTQ_TENANT_WEIGHTS',
      default: '',
      shownDefault: 'empty (off)',
      allowed:
        '`<tenant>:<weight>` entries separated by commas; `*:<weight>` for every other tenant (1 unless given); weights above 0, at most 1000',
      doc: 'Weighted fairness between tenants: under contention each tenant’s step jobs are served in proportion to its weight (`acme:3,beta:1`: acme gets three steps for each of beta’s), decided each time a step job is added (stride scheduling on the jobs’ BullMQ priorities, per shard queue); a tenant idle a while starts again level with the others, it banks no credit. A run’s own `priority` still orders it within its tenant (each point puts it one weight-1 step further back). Set, it replaces `AGENTQ_TENANT_FAIR_SHARE`’s priority raise. Empty: off. Read by workers and by every process that creates runs (give them the same list).',
      when: 'When tenants share the workers and some must get more of them; `*:1` alone for equal shares.',
      read: (value): Read<TenantWeights> => {
        const parsedWeights = parseTenantWeights(value);
        return 'problem' in parsedWeights ? { problems: [parsedWeights.problem] } : { value: parsedWeights.weights };
      },
    }),
    tenantMaxBytes: integer({
      env: 'AGENTQ_TENANT_MAX_BYTES',
      min: 0,
      // 1 GiB: Redis keeps everything in memory, so one machine's Redis (a few GiB) holds a few tenants at
      // their budget — hundreds of long runs each — and no single tenant can fill it.
      default: 1024 ** 3,
      shownDefault: '`1073741824` (1 GiB)',
      doc: 'Bytes a tenant may keep in Redis: every byte of its runs (input, state, history, steps, events, recording, output, forks, conversation turns) and of its documents awaiting indexing, charged as they are stored and released when they expire or are purged. A tenant’s own `storageBytes` limit replaces it, and so does `storageBytes` in `AGENTQ_TENANT_BUDGET_DEFAULTS` for tenants without one. A run that would start past it gets 429 `STORAGE_BUDGET_EXCEEDED`, or 413 when its input alone is larger; a run already started finishes and is charged in full. 0 = unlimited.',
      when: 'Raise it (or 0) when one tenant owns the Redis and its memory allows; lower it when tenants you do not trust share a small one.',
    }),
    tenantBudgetDefaults: parsed({
      env: 'AGENTQ_TENANT_BUDGET_DEFAULTS',
      default: '{}',
      shownDefault: '`{}` (unlimited)',
      allowed: 'JSON like `{"tokensPerDay":1000000,"costUsdPerMonth":50}`',
      doc: 'Budgets of a tenant an admin has set none for: `tokensPerDay`, `tokensPerMonth`, `costUsdPerDay`, `costUsdPerMonth`.',
      read: (value): Read<TenantBudgetLimits> => {
        try {
          return { value: parseTenantBudgetLimits(JSON.parse(value)) };
        } catch (error) {
          return {
            problems: [`must be JSON like {"tokensPerDay":1000000,"costUsdPerMonth":50}: ${(error as Error).message}`],
          };
        }
      },
    }),
    tenantPolicy: parsed({
      env: 'AGENTQ_TENANT_POLICY_FILE',
      allowed: 'the path of a JSON policy file (docs/guides/tenant-policy.md)',
      shownDefault: 'unset (with API keys: the safe default; without: open)',
      doc: 'What each tenant’s (and key’s) runs may ask for: graphs, tools, pinned guardrails, system prompt, template variables, images, model settings and their bounds; a request outside it gets 403 `POLICY_DENIED`. Read and validated at start-up. Unset: with API keys, the safe default of docs/guides/tenant-policy.md; without keys (open loopback mode), anything.',
      when: 'Before tenants you do not control call a keyed API; give the workers the same file (they pin its guardrails).',
      read: (value): Read<TenantPolicyFile> => {
        try {
          return { value: readTenantPolicyFile(value) };
        } catch (error) {
          return { problems: [(error as Error).message] };
        }
      },
    }),
    trustProxy: parsed({
      env: 'AGENTQ_TRUST_PROXY',
      default: 'false',
      allowed:
        '`false`, proxy addresses/CIDRs separated by commas, a hop count, or `true` (deprecated: read as `1`, with a warning)',
      doc: 'Which proxies’ `X-Forwarded-For/-Proto/-Host` the API believes: the client address failed sign-ins are counted by, and https, which makes sign-in cookies `Secure`. Named proxies are the safe choice: a peer that is not one of them is its own client address whatever it forwards. A hop count believes that many peers, whoever connects; their failed authentications are also counted per connection (10× the per-address limit), so a peer that rotates `X-Forwarded-For` cannot guess keys without limit.',
      when: 'Set it behind a TLS-terminating proxy: its addresses (e.g. `10.0.0.0/8`), or `1` when any peer that can connect is that proxy.',
      read: (value): Read<TrustProxy> => {
        const text = value.trim();
        if (/^(false|0|no|)$/i.test(text)) return { value: false };
        if (/^(true|yes)$/i.test(text)) return { value: true };
        if (/^\d+$/.test(text)) return { value: Number(text) };
        const addresses = text.split(',').map((item) => item.trim());
        if (addresses.every((item) => /^[0-9A-Fa-f.:]+(\/\d{1,3})?$/.test(item))) return { value: addresses };
        return {
          problems: [
            `must be true, false, a hop count, or proxy addresses/CIDRs separated by commas (e.g. 10.0.0.0/8,127.0.0.1), got "${value}"`,
          ],
        };
      },
    }),
    publicDocs: flag({
      env: 'AGENTQ_PUBLIC_DOCS',
      default: false,
      doc: 'Serve `/docs` and `/docs/json` (the route map) without a key; otherwise they need a Bearer key or a signed-in browser.',
    }),
    authFailuresPerMinute: integer({
      env: 'AGENTQ_AUTH_FAILURES_PER_MINUTE',
      min: 0,
      default: 20,
      doc: 'Failed authentications per client address, and per credential presented, per minute before a wrong credential answers 429 with `Retry-After` instead of 401 (until the minute passes); a correct key is always accepted; 0 = off.',
      when: 'Raise it when many clients share one address behind an untrusted proxy.',
    }),
    dashboardWrite: flag({
      env: 'AGENTQ_DASHBOARD_WRITE',
      default: false,
      doc: 'Bull Board may retry, remove and promote jobs (read-only otherwise).',
    }),
    dashboardSessionSeconds: integer({
      env: 'AGENTQ_DASHBOARD_SESSION_SECONDS',
      min: 60,
      default: 12 * 3600,
      shownDefault: '`43200` (12 h)',
      doc: 'Lifetime of a dashboard sign-in cookie.',
    }),
    traceUrl: parsed({
      env: 'AGENTQ_TRACE_URL',
      allowed: 'an http(s) URL containing `{traceId}`',
      doc: 'A trace viewer’s URL with `{traceId}` in it: the run inspector links each run’s trace id there; unset, the id is shown as text.',
      when: 'When traces are exported; Jaeger from `docker-compose.yml`: `http://localhost:16686/trace/{traceId}`.',
      read: (value): Read<string> =>
        value.includes('{traceId}') && /^https?:\/\//.test(value)
          ? { value }
          : {
              problems: [
                `must be an http(s) URL containing {traceId}, e.g. http://localhost:16686/trace/{traceId}, got ${quoteValue(value)}`,
              ],
            },
    }),
    chatWaitMs: integer({
      env: 'AGENTQ_CHAT_WAIT_MS',
      min: 0,
      default: 30_000,
      doc: 'How long `POST /v1/agent/chat` waits for the answer when the client sent `Prefer: respond-async` (its `wait=<s>` overrides): 200 within it, else 202 with the run record and `Location: /v1/runs/<id>` to poll; 0 = always 202. Without that header a chat request waits for its answer as long as the client does.',
    }),
    chatSourcesTenants: parsed({
      env: 'AGENTQ_CHAT_SOURCES_TENANTS',
      default: '*',
      shownDefault: '`*` (every tenant)',
      allowed: '`*`, or tenant names separated by commas',
      doc: 'Tenants whose chat answers may carry `sources` and citation markers — the “sources allowed by plan” rule; others get `sources: []` whatever `citations` says.',
      when: 'Set it when sources are part of a paid plan.',
      read: (value) => ({
        value: value
          .split(',')
          .map((name) => name.trim())
          .filter(Boolean),
      }),
    }),
    // ---- The API's edge: uploads and event streams. ----
    uploadMaxBytes: integer({
      env: 'AGENTQ_UPLOAD_MAX_BYTES',
      min: 1024,
      default: 100 * 1024 * 1024,
      shownDefault: '`104857600` (100 MiB)',
      doc: 'Bytes of all files of one `POST /v1/documents` together (each file also at most `AGENTQ_INGEST_MAX_BYTES`). Files stream to Redis as they arrive; past the limit the API answers 413 at once and keeps nothing of the request.',
      when: 'Raise it to upload more per request (Redis holds an upload’s bytes until they are indexed); the CLI’s `agentq ingest` has no such limit.',
    }),
    sseMaxStreams: integer({
      env: 'AGENTQ_SSE_MAX_STREAMS',
      min: 0,
      default: 5000,
      doc: 'Event streams (SSE: `GET /v1/runs/:id/events`, the inspector’s, streamed chat) one API process serves at once; more get 429 with `Retry-After`; 0 = no limit. All of a process’s streams share one Redis connection (one per shard on a Cluster).',
      when: 'Lower it to the file descriptors you give the API process (each stream holds one socket).',
    }),
    sseTenantMaxStreams: integer({
      env: 'AGENTQ_SSE_TENANT_MAX_STREAMS',
      min: 0,
      default: 500,
      doc: 'Event streams one tenant may hold open on one API process; more get 429 with `Retry-After`; 0 = no limit.',
      when: 'Lower it so that one tenant cannot take a process’s streams from the others.',
    }),
    // ---- end of the API's edge ----
  },
  configOf: (values) => ({
    ...values,
    traceUrl: values.traceUrl ?? null,
    // storageBytes in AGENTQ_TENANT_BUDGET_DEFAULTS is the operator's own choice: it wins over the default.
    tenantMaxBytes: values.tenantBudgetDefaults.storageBytes ?? values.tenantMaxBytes,
  }),
});

export type ApiConfig = AreaConfig<typeof apiArea>;

/** Fastify's trustProxy: which proxies' X-Forwarded-For/-Proto/-Host the API believes. */
type TrustProxy = boolean | number | string[];
