import { AgentqError } from '../contracts/errors.js';
import { specName, type GuardrailPlan, type GuardrailSpec } from '../contracts/guardrail-spec.js';
import { listAllows, type ResolvedRules, type RulesSource } from './tenant-policy.js';

/** A run request as the policy sees it: its graph and its input, whatever door it came through. */
export interface PolicyRequest {
  tenant: string;
  graph: string;
  input: unknown;
}

type Rules = ResolvedRules & { source: RulesSource };

/** The `{{name}}` syntax of message templates (worker/agents/schemas/message-template.ts). */
const TEMPLATE_VARIABLE = /\{\{\s*[A-Za-z_][A-Za-z0-9_.-]{0,63}\s*\}\}/;

function denied(
  request: PolicyRequest,
  rules: Rules,
  what: { control: string; field: string; rule: string; message: string },
): AgentqError {
  const where = rules.source.entry.startsWith('(')
    ? `set AGENTQ_TENANT_POLICY_FILE with "${what.rule}" for tenant ${request.tenant} (now ${rules.source.entry})`
    : `change "${what.rule}" in the ${rules.source.entry} entry of AGENTQ_TENANT_POLICY_FILE`;
  return new AgentqError(
    'POLICY_DENIED',
    `${what.message} (input field ${what.field}) is not allowed for tenant ${request.tenant}; the operator decides: ${where}`,
    {
      details: {
        control: what.control,
        field: what.field,
        tenant: request.tenant,
        rule: what.rule,
        policyEntry: rules.source.entry,
      },
    },
  );
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** The system-prompt fields of the built-in graphs' inputs (react-agent, reflect, multi-agent's experts). */
function systemFields(input: Record<string, unknown>): [string, string][] {
  const fields: [string, string][] = [];
  for (const field of ['system', 'writerSystem', 'judgeSystem'])
    if (typeof input[field] === 'string') fields.push([field, input[field]]);
  if (Array.isArray(input.experts))
    input.experts.forEach((expert, index) => {
      const system = record(expert).system;
      if (typeof system === 'string') fields.push([`experts.${index}.system`, system]);
    });
  return fields;
}

function hasImages(input: Record<string, unknown>): string | null {
  for (const field of ['query', 'task', 'content', 'messages']) {
    const value = input[field];
    if (!Array.isArray(value)) continue;
    const parts = value.flatMap((item) => {
      const content = record(item).content;
      return Array.isArray(content) ? content : [item];
    });
    if (parts.some((part) => ['image_url', 'input_image', 'image'].includes(String(record(part).type)))) return field;
  }
  return null;
}

function checkRange(
  request: PolicyRequest,
  rules: Rules,
  field: 'temperature' | 'maxOutputTokens' | 'maxToolRounds',
  value: unknown,
): void {
  if (typeof value !== 'number') return;
  const { min, max } = rules.model[field];
  if ((min === undefined || value >= min) && (max === undefined || value <= max)) return;
  const range = `${min ?? 'any'} to ${max ?? 'any'}`;
  throw denied(request, rules, {
    control: 'model',
    field,
    rule: `model.${field}`,
    message: `${field} ${value} is outside ${range}`,
  });
}

/**
 * Refuses (POLICY_DENIED, 403 at the API) a run request that asks for something the tenant's rules do
 * not allow. It reads the input by the built-in graphs' field names (`system`, `tools`, `guardrails`,
 * `variables`, `model`, `temperature`, …), so a custom graph that names its options alike is held too.
 */
export function checkRunPolicy(rules: Rules, request: PolicyRequest): void {
  if (!listAllows(rules.graphs, request.graph))
    throw denied(request, rules, {
      control: 'graphs',
      field: 'graph',
      rule: 'graphs',
      message: `graph ${request.graph}`,
    });
  const input = record(request.input);
  if (Array.isArray(input.tools)) {
    const refused = input.tools.filter((tool) => typeof tool === 'string' && !listAllows(rules.tools, tool));
    if (refused.length > 0)
      throw denied(request, rules, {
        control: 'tools',
        field: 'tools',
        rule: 'tools',
        message: `tool ${refused.map((tool) => `'${String(tool)}'`).join(', ')}`,
      });
  }
  if (input.guardrails !== undefined && !rules.runGuardrails)
    throw denied(request, rules, {
      control: 'guardrails',
      field: 'guardrails',
      rule: 'runGuardrails',
      message: "replacing the graph's guardrails",
    });
  const systems = systemFields(input);
  if (systems.length > 0 && !rules.systemPrompt)
    throw denied(request, rules, {
      control: 'systemPrompt',
      field: systems[0]![0],
      rule: 'systemPrompt',
      message: 'a system prompt of the run’s own',
    });
  if (input.variables !== undefined) {
    if (rules.variables === 'off')
      throw denied(request, rules, {
        control: 'variables',
        field: 'variables',
        rule: 'variables',
        message: 'template variables',
      });
    const templated = systems.find(([, text]) => TEMPLATE_VARIABLE.test(text));
    if (templated && rules.variables !== 'system')
      throw denied(request, rules, {
        control: 'variables',
        field: templated[0],
        rule: 'variables',
        message: 'template variables in the system prompt',
      });
  }
  const images = hasImages(input);
  if (images && !rules.images)
    throw denied(request, rules, { control: 'images', field: images, rule: 'images', message: 'image content' });
  if (typeof input.model === 'string' && !listAllows(rules.model.names, input.model))
    throw denied(request, rules, {
      control: 'model',
      field: 'model',
      rule: 'model.names',
      message: `model ${input.model}`,
    });
  checkRange(request, rules, 'temperature', input.temperature);
  checkRange(request, rules, 'maxOutputTokens', input.maxOutputTokens);
  checkRange(request, rules, 'maxToolRounds', input.maxToolRounds);
}

// The plan's own copy of a pinned guardrail goes only when it is the same (name and options): one with
// other options (a deny_list with no patterns) runs after the operator's and so cannot weaken it.
function withPinned(pinned: readonly GuardrailSpec[], own: readonly GuardrailSpec[]): GuardrailSpec[] {
  const same = new Set(pinned.map(specKey));
  return [...pinned, ...own.filter((spec) => !same.has(specKey(spec)))];
}

function specKey(spec: GuardrailSpec): string {
  return JSON.stringify({ name: specName(spec), options: typeof spec === 'string' ? {} : (spec.options ?? {}) });
}

/**
 * `plan` with the tenant's pinned guardrails put first in each stage: what a run cannot remove, by `guardrails: []` or by any other door.
 */
export function pinGuardrails(plan: GuardrailPlan, rules: Pick<ResolvedRules, 'pinnedGuardrails'>): GuardrailPlan {
  const { input, output } = rules.pinnedGuardrails;
  if (input.length === 0 && output.length === 0) return plan;
  return { ...plan, input: withPinned(input, plan.input), output: withPinned(output, plan.output) };
}

function isGuardrailPlan(value: unknown): value is GuardrailPlan {
  const plan = record(value);
  return Array.isArray(plan.input) && Array.isArray(plan.output) && typeof plan.maxReprompts === 'number';
}

/**
 * A run's initial state with the tenant's pinned guardrails in its guardrail plan (the built-in agents
 * keep it in the `guardrails` channel, a custom graph that uses the guardrail helpers likewise). The
 * worker applies it when it takes a run in, so no door — API, client, raw BullMQ job — can remove them.
 */
export function pinGuardrailsInState<S extends Record<string, unknown>>(
  state: S,
  rules: Pick<ResolvedRules, 'pinnedGuardrails'>,
): S {
  return isGuardrailPlan(state.guardrails) ? { ...state, guardrails: pinGuardrails(state.guardrails, rules) } : state;
}
