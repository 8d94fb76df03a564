import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/config/config.js';
import { AgentqError } from '../../shared/contracts/errors.js';
import { planGuardrails } from '../../shared/contracts/guardrail-spec.js';
import { checkRunPolicy, pinGuardrailsInState } from '../../shared/config/tenant-policy-check.js';
import { parseTenantPolicy, TenantPolicy, toolAllowed } from '../../shared/config/tenant-policy.js';
import { docSnippet } from '../helpers/doc-pages.js';

const denial = (run: () => void) => {
  try {
    run();
  } catch (error) {
    if (AgentqError.isInstance(error)) return { code: error.code, message: error.message, details: error.details };
    throw error;
  }
  return null;
};

describe('tenant policy', () => {
  const example = JSON.parse(docSnippet('docs/guides/tenant-policy.md', 'json', '{\n  "default"')) as unknown;
  const policy = TenantPolicy.of(parseTenantPolicy(example, 'the guide'));

  it("the guide's example file parses, and each entry refines the one below it", () => {
    const acme = policy.rulesFor('acme');
    expect(acme).toMatchObject({
      graphs: ['react-agent', 'rag-agent'], // from default
      tools: ['calculator', 'lookup_order'], // its own
      systemPrompt: false, // the safe default
      model: { names: ['gpt-4o-mini'], temperature: { max: 1 }, maxToolRounds: { max: 20 } },
      source: { entry: 'tenants.acme' },
    });
    expect(policy.rulesFor('internal', '3f9a1c2b7d4e5f60')).toMatchObject({
      graphs: '*',
      systemPrompt: true,
      source: { entry: 'keys.3f9a1c2b7d4e5f60' },
    });
    expect(policy.rulesFor('someone-else')).toMatchObject({
      graphs: ['react-agent', 'rag-agent'],
      runGuardrails: false,
    });
  });

  it('toolAllowed answers per tenant: the safe set by default, the open mode anything', () => {
    expect(toolAllowed(policy, 'acme', 'lookup_order')).toBe(true);
    expect(toolAllowed(policy, 'acme', 'http_fetch')).toBe(false);
    expect(toolAllowed(policy, 'internal', 'http_fetch')).toBe(true);
    expect(toolAllowed(TenantPolicy.of(undefined, true), 't', 'calculator')).toBe(true);
    expect(toolAllowed(TenantPolicy.of(undefined, true), 't', 'wire')).toBe(false);
    expect(toolAllowed(TenantPolicy.of(undefined, false), 't', 'wire')).toBe(true);
  });

  it('a bad file is refused at start-up, naming the field', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentq-policy-'));
    try {
      const file = join(dir, 'policy.json');
      writeFileSync(
        file,
        JSON.stringify({ tenants: { acme: { model: { temperature: { max: 7 } }, systemPrompts: true } } }),
      );
      expect(() => loadConfig({ AGENTQ_TENANT_POLICY_FILE: file })).toThrow(
        /AGENTQ_TENANT_POLICY_FILE[\s\S]*tenants\.acme\.model\.temperature\.max[\s\S]*tenants\.acme\.systemPrompts: unknown field/,
      );
      writeFileSync(file, '{ not json');
      expect(() => loadConfig({ AGENTQ_TENANT_POLICY_FILE: file })).toThrow(/is not JSON/);
      expect(() => loadConfig({ AGENTQ_TENANT_POLICY_FILE: join(dir, 'missing.json') })).toThrow(/cannot read/);
      // A key's entry cannot pin guardrails: a worker never learns which key created a run.
      expect(() => parseTenantPolicy({ keys: { k: { pinnedGuardrails: { input: ['pii_redaction'] } } } }, 'f')).toThrow(
        /keys\.k\.pinnedGuardrails: unknown field/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('variables reach a run’s own system prompt only where the rules say "system"', () => {
    const rules = (variables: 'off' | 'user' | 'system') =>
      TenantPolicy.of({ default: { systemPrompt: true, variables } }).rulesFor('t');
    const input = { query: 'q', system: 'You are {{ persona }}', variables: { persona: 'root' } };
    expect(denial(() => checkRunPolicy(rules('user'), { tenant: 't', graph: 'g', input }))).toMatchObject({
      code: 'POLICY_DENIED',
      details: { control: 'variables', field: 'system' },
    });
    expect(denial(() => checkRunPolicy(rules('system'), { tenant: 't', graph: 'g', input }))).toBeNull();
    expect(
      denial(() =>
        checkRunPolicy(rules('off'), { tenant: 't', graph: 'g', input: { query: '{{a}}', variables: { a: 'b' } } }),
      ),
    ).toMatchObject({ details: { control: 'variables', field: 'variables' } });
    // reflect's and multi-agent's system prompts are system prompts too.
    const safe = TenantPolicy.of(undefined).rulesFor('t');
    expect(
      denial(() => checkRunPolicy(safe, { tenant: 't', graph: 'g', input: { experts: [{ name: 'a', system: 's' }] } })),
    ).toMatchObject({ details: { control: 'systemPrompt', field: 'experts.0.system' } });
    expect(denial(() => checkRunPolicy(safe, { tenant: 't', graph: 'g', input: { judgeSystem: 's' } }))).toMatchObject({
      details: { field: 'judgeSystem' },
    });
  });

  it('pinned guardrails go first in the plan whatever the run asked, and a weaker copy of one cannot replace it', () => {
    const pinned = TenantPolicy.of({
      tenants: { acme: { pinnedGuardrails: { input: [{ name: 'deny_list', options: { keywords: ['wire'] } }] } } },
    });
    const runsOwn = planGuardrails(
      { input: ['pii_redaction'] },
      { input: [{ name: 'deny_list', options: { keywords: ['nothing'] } }], output: [] },
    );
    const state = pinGuardrailsInState({ query: 'q', guardrails: runsOwn }, pinned.rulesFor('acme'));
    expect(state.guardrails.input).toEqual([
      { name: 'deny_list', options: { keywords: ['wire'] } },
      { name: 'deny_list', options: { keywords: ['nothing'] } },
    ]);
    // Other tenants, and states without a guardrail plan, are left as they are.
    expect(pinGuardrailsInState({ guardrails: runsOwn }, pinned.rulesFor('globex')).guardrails).toBe(runsOwn);
    expect(pinGuardrailsInState({ steps: 1 }, pinned.rulesFor('acme'))).toEqual({ steps: 1 });
  });
});
