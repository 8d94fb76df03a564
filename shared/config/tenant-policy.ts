import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { guardrailsInputSchema, type GuardrailSpec } from '../contracts/guardrail-spec.js';

/**
 * The operator's policy: what a tenant's runs may ask for (docs/guides/tenant-policy.md). A file of
 * `{ default, tenants: { <tenant>: rules }, keys: { <key id>: rules } }`; each entry's fields replace
 * the ones below it (key over tenant over default over the built-in safe default), field by field.
 */

const name = z.string().regex(/^[A-Za-z0-9_.:@/-]{1,200}$/, 'names are 1-200 characters of letters, digits, _.:@/-');
/** `"*"`: any; a list: only these. */
const allowList = z.union([z.literal('*'), z.array(name).max(1000)]);
type AllowList = z.infer<typeof allowList>;

const bound = (what: string, max: number) =>
  z
    .strictObject({ min: z.number().min(0).max(max).optional(), max: z.number().min(0).max(max).optional() })
    .refine((range) => range.min === undefined || range.max === undefined || range.min <= range.max, {
      message: `${what}.min must not be above ${what}.max`,
    });

const rulesSchema = z.strictObject({
  /** Graph names a run may start (`"*"`: any the workers serve). */
  graphs: allowList.optional(),
  /** Tools a run may name, and the runtime may execute for it (`"*"`: any the worker registers). */
  tools: allowList.optional(),
  /** Guardrails added to every run of the tenant, whatever the run or graph says (the worker enforces them). */
  pinnedGuardrails: guardrailsInputSchema.pick({ input: true, output: true }).optional(),
  /** A run may set `guardrails` (replacing the graph's per stage). */
  runGuardrails: z.boolean().optional(),
  /** A run may set `system` (replacing the graph's system prompt). */
  systemPrompt: z.boolean().optional(),
  /** `off`: a run may not send `variables`; `user`: only into the user part; `system`: into its own system prompt too. */
  variables: z.enum(['off', 'user', 'system']).optional(),
  /** A run may send image parts. */
  images: z.boolean().optional(),
  /** The model settings a run may choose. */
  model: z
    .strictObject({
      /** Model names a run may ask for (`"*"`: any; `[]`: only the worker's own). */
      names: allowList.optional(),
      temperature: bound('temperature', 2).optional(),
      maxOutputTokens: bound('maxOutputTokens', 1_000_000).optional(),
      maxToolRounds: bound('maxToolRounds', 1000).optional(),
    })
    .optional(),
});
export type TenantPolicyRules = z.infer<typeof rulesSchema>;

export const tenantPolicyFileSchema = z.strictObject({
  default: rulesSchema.optional(),
  tenants: z.record(z.string().min(1).max(128), rulesSchema).optional(),
  // Workers know a run's tenant, not the key that created it: pinned guardrails are per tenant only.
  keys: z.record(z.string().min(1).max(128), rulesSchema.omit({ pinnedGuardrails: true })).optional(),
});
export type TenantPolicyFile = z.infer<typeof tenantPolicyFileSchema>;

type Range = { min?: number | undefined; max?: number | undefined };

/** A tenant's (or key's) rules with every field decided. */
export interface ResolvedRules {
  graphs: AllowList;
  tools: AllowList;
  pinnedGuardrails: { input: GuardrailSpec[]; output: GuardrailSpec[] };
  runGuardrails: boolean;
  systemPrompt: boolean;
  variables: 'off' | 'user' | 'system';
  images: boolean;
  model: { names: AllowList; temperature: Range; maxOutputTokens: Range; maxToolRounds: Range };
}

/** The open loopback mode (no API keys, no policy file): the caller is the operator. */
export const OPEN_RULES: ResolvedRules = {
  graphs: '*',
  tools: '*',
  pinnedGuardrails: { input: [], output: [] },
  runGuardrails: true,
  systemPrompt: true,
  variables: 'system',
  images: true,
  model: { names: '*', temperature: {}, maxOutputTokens: {}, maxToolRounds: {} },
};

/**
 * Keyed APIs without a policy file, and the base every file's entries refine: a run keeps the graph's
 * system prompt and guardrails, its variables stay out of the system part, it picks no other model, and
 * only the side-effect-free built-in tools are offered.
 */
export const SAFE_RULES: ResolvedRules = {
  graphs: '*',
  tools: ['calculator', 'current_time'],
  pinnedGuardrails: { input: [], output: [] },
  runGuardrails: false,
  systemPrompt: false,
  variables: 'user',
  images: true,
  model: { names: [], temperature: { min: 0, max: 1.5 }, maxOutputTokens: { max: 4096 }, maxToolRounds: { max: 20 } },
};

function refine(base: ResolvedRules, rules: TenantPolicyRules | undefined): ResolvedRules {
  if (!rules) return base;
  return {
    graphs: rules.graphs ?? base.graphs,
    tools: rules.tools ?? base.tools,
    pinnedGuardrails: {
      input: rules.pinnedGuardrails?.input ?? base.pinnedGuardrails.input,
      output: rules.pinnedGuardrails?.output ?? base.pinnedGuardrails.output,
    },
    runGuardrails: rules.runGuardrails ?? base.runGuardrails,
    systemPrompt: rules.systemPrompt ?? base.systemPrompt,
    variables: rules.variables ?? base.variables,
    images: rules.images ?? base.images,
    model: {
      names: rules.model?.names ?? base.model.names,
      temperature: rules.model?.temperature ?? base.model.temperature,
      maxOutputTokens: rules.model?.maxOutputTokens ?? base.model.maxOutputTokens,
      maxToolRounds: rules.model?.maxToolRounds ?? base.model.maxToolRounds,
    },
  };
}

/** Where the rules of a request came from: the words a refusal uses to say what to change. */
export interface RulesSource {
  /** `AGENTQ_TENANT_POLICY_FILE` entry to edit, e.g. `tenants.acme`, or the built-in default's name. */
  entry: string;
}

/**
 * The operator's policy as the API and workers apply it. Built once per process from the
 * configuration (`TenantPolicy.fromConfig`).
 */
export class TenantPolicy {
  private constructor(
    private readonly file: TenantPolicyFile | undefined,
    private readonly base: ResolvedRules,
  ) {}

  /**
   * From AGENTQ_TENANT_POLICY_FILE (`config.tenantPolicy`); without one, SAFE_RULES when callers present
   * API keys (`keyed`), else OPEN_RULES.
   */
  static fromConfig(config: { tenantPolicy?: TenantPolicyFile | undefined }, keyed: boolean): TenantPolicy {
    if (config.tenantPolicy) return new TenantPolicy(config.tenantPolicy, SAFE_RULES);
    return new TenantPolicy(undefined, keyed ? SAFE_RULES : OPEN_RULES);
  }

  /** A policy from a file's contents (tests, embedders). */
  static of(file: TenantPolicyFile | undefined, keyed = true): TenantPolicy {
    return new TenantPolicy(file ? parseTenantPolicy(file, 'the policy') : undefined, keyed ? SAFE_RULES : OPEN_RULES);
  }

  /** The rules of `tenant` (and of the API key `keyId`, when the file has an entry for it). */
  rulesFor(tenant: string, keyId?: string): ResolvedRules & { source: RulesSource } {
    const file = this.file;
    let rules = refine(this.base, file?.default);
    let entry = file ? 'default' : this.base === OPEN_RULES ? '(open mode: no API keys)' : '(built-in safe default)';
    const own = file?.tenants?.[tenant];
    if (own) [rules, entry] = [refine(rules, own), `tenants.${tenant}`];
    const key = keyId === undefined ? undefined : file?.keys?.[keyId];
    if (key) [rules, entry] = [refine(rules, key), `keys.${keyId}`];
    return { ...rules, source: { entry } };
  }
}

export function listAllows(list: AllowList, value: string): boolean {
  return list === '*' || list.includes(value);
}

/** Whether `tenant`'s runs may use the tool `name` (the seam of the tool-execution path). */
export function toolAllowed(policy: TenantPolicy, tenant: string, name: string, keyId?: string): boolean {
  return listAllows(policy.rulesFor(tenant, keyId).tools, name);
}

/** A policy file's contents validated; a problem names the field (`tenants.acme.model.temperature.max: …`). */
export function parseTenantPolicy(value: unknown, source: string): TenantPolicyFile {
  const parsed = tenantPolicyFileSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => {
    const field = [...issue.path.map(String), ...(issue.code === 'unrecognized_keys' ? [issue.keys.join(', ')] : [])];
    return `${field.join('.') || '(top level)'}: ${issue.code === 'unrecognized_keys' ? 'unknown field' : issue.message}`;
  });
  throw new Error(`${source}: ${problems.join('; ')}`);
}

/** Reads and validates the policy file at `path` (start-up: a bad file stops the process, naming the field). */
export function readTenantPolicyFile(path: string): TenantPolicyFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(`cannot read ${path}: ${(error as Error).message}`, { cause: error });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`${path} is not JSON: ${(error as Error).message}`, { cause: error });
  }
  return parseTenantPolicy(json, path);
}
