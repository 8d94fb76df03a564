// Setting declarations: read shared/config/settings/all-settings.ts first (how to add one).
import { ID_PATTERN } from '../../contracts/ids.js';
import { flag, integer, parsed, type Read } from '../setting-builders.js';
import { defineArea, type AreaConfig } from '../settings-area.js';

/** `<tenant>:<secret>,…` by tenant; each malformed entry is named (by its tenant, never its secret). */
function readWebhookSecrets(value: string): Read<Record<string, string>> {
  const secrets: Record<string, string> = {};
  const problems: string[] = [];
  for (const entry of value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)) {
    const colon = entry.indexOf(':');
    const tenant = colon < 0 ? '' : entry.slice(0, colon);
    if ((tenant !== '*' && !ID_PATTERN.test(tenant)) || colon === entry.length - 1) {
      problems.push(
        `entry '${tenant || entry.slice(0, 12)}…' must be <tenant>:<secret> (tenant '*' = every tenant without its own)`,
      );
      continue;
    }
    secrets[tenant] = entry.slice(colon + 1);
  }
  return problems.length > 0 ? { problems } : { value: secrets };
}

/** Webhooks: how runs' results are delivered to your endpoints. */
export const webhookArea = defineArea({
  title: 'Webhooks',
  intro: 'How workers deliver a run’s result to the webhook URL it names, signed with its tenant’s secret.',
  settings: {
    webhookSecrets: parsed({
      env: 'AGENTQ_WEBHOOK_SECRETS',
      default: '',
      secret: true,
      allowed: '`<tenant>:<secret>` entries separated by commas',
      doc: 'Webhook signing secret per tenant: `<tenant>:<secret>,…`; `*` for every tenant without its own.',
      when: 'Before any run names a webhook: receivers check the signature.',
      read: readWebhookSecrets,
    }),
    webhookAllowPrivate: flag({
      env: 'AGENTQ_WEBHOOK_ALLOW_PRIVATE',
      default: false,
      doc: 'Deliver webhooks to private, loopback and link-local addresses too.',
      when: 'Tests, and receivers on a private network you trust.',
    }),
    webhookMaxAttempts: integer({
      env: 'AGENTQ_WEBHOOK_MAX_ATTEMPTS',
      min: 1,
      default: 8,
      doc: 'Delivery attempts per webhook.',
    }),
    webhookBackoffMs: integer({
      env: 'AGENTQ_WEBHOOK_BACKOFF_MS',
      min: 10,
      default: 2000,
      doc: 'First retry delay of a webhook, doubling per attempt.',
    }),
    webhookTimeoutMs: integer({
      env: 'AGENTQ_WEBHOOK_TIMEOUT_MS',
      min: 100,
      default: 10_000,
      doc: 'Per delivery attempt.',
    }),
    webhookConcurrency: integer({
      env: 'AGENTQ_WEBHOOK_CONCURRENCY',
      min: 1,
      default: 4,
      doc: 'Webhook deliveries at once per worker process.',
    }),
  },
});

export type WebhookConfig = AreaConfig<typeof webhookArea>;
