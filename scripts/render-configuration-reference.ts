import type { Setting } from '../shared/config/setting-builders.js';
import type { SettingsArea } from '../shared/config/settings-area.js';

/** What the page shows of an area. */
type AreaDocs = Pick<SettingsArea, 'title' | 'intro' | 'settings'>;
import { SETTINGS_AREAS } from '../shared/config/settings/all-settings.js';

/** Where the page lives, from the repository's root. */
export const CONFIGURATION_REFERENCE_PATH = 'docs/reference/configuration.md';

const HEADER = `# Configuration reference

<!-- Generated from the declarations in shared/config/settings/ by \`npm run docs:config\`: edit those, not this page. -->

agentq reads its settings from environment variables, each declared once in \`shared/config/settings/\`
(one file per section below). An empty variable counts as unset. Every variable is validated when a
worker or the API starts: a bad value stops the process with \`INVALID_INPUT\` and a message naming the
variable, the value given and what is allowed, every bad variable at once, e.g.

<!-- tested: test/unit/configuration-reference.test.ts -->
\`\`\`text
invalid configuration: AGENTQ_WORKER_CONCURRENCY: must be a whole number ≥ 1, got "0"; AGENTQ_LLM_STREAM: must be true or false (or 1/0, yes/no), got "on" (see docs/reference/configuration.md)
\`\`\`

Secrets (API keys, signing secrets) are never repeated in such a message, and a URL's user and password
are masked. The CLI's read commands (\`status\`, \`runs\`, \`steps\`, \`wait\`, \`events\`, \`purge\`) read only
the Redis settings, and \`agentq search\` only the search settings and \`AGENTQ_TENANT\` (all of them when
the query is embedded), so a bad value of another variable does not stop them.
`;

const FOOTER = `## OpenTelemetry

| Variable | Default | What it does |
|---|---|---|
| \`OTEL_*\` | unset | The standard OpenTelemetry exporter settings, read by the OpenTelemetry SDK itself: tracing is off unless \`OTEL_TRACES_EXPORTER\` or an \`OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT\` is set. |
`;

/** Markdown table cells: no line breaks, and `|` escaped. */
function cell(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').replaceAll('|', '\\|');
}

function anchorOf(title: string): string {
  return title
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, '')
    .replace(/ /g, '-');
}

function row(setting: Setting<unknown>): string {
  const meaning = setting.when ? `${setting.doc} **When to change it:** ${setting.when}` : setting.doc;
  return `| \`${setting.env}\` | ${cell(setting.shownDefault)} | ${cell(setting.allowed)} | ${cell(meaning)} |`;
}

function section(area: AreaDocs): string {
  return [
    `## ${area.title}`,
    '',
    area.intro,
    '',
    '| Variable | Default | Allowed | What it does |',
    '|---|---|---|---|',
    ...Object.values(area.settings).map(row),
    '',
  ].join('\n');
}

/** The configuration reference page, from the declarations (`npm run docs:config` writes it). */
export function renderConfigurationReference(areas: readonly AreaDocs[] = SETTINGS_AREAS): string {
  const contents = areas.map((area) => `- [${area.title}](#${anchorOf(area.title)})`).join('\n');
  return [HEADER, contents + '\n- [OpenTelemetry](#opentelemetry)\n', ...areas.map(section), FOOTER].join('\n');
}
