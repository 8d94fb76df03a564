import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/config/config.js';
import { createDefaultServices } from '../../worker/default-services.js';
import { runToolsOf } from '../../worker/agents/tools/tool-provider.js';
import { fakeNodeContext } from '../../testing/index.js';

// The worker holds the policy file's tool rules below every graph: a run that leaves `tools` out is
// offered only what its tenant may use, whatever reached the queue.
describe("a worker's tools under AGENTQ_TENANT_POLICY_FILE", () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentq-policy-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'policy.json');
  writeFileSync(file, JSON.stringify({ default: { tools: '*' }, tenants: { acme: { tools: ['calculator'] } } }));

  const offered = async (env: NodeJS.ProcessEnv, tenant: string) => {
    const services = createDefaultServices(loadConfig(env));
    const { context } = fakeNodeContext({ ...services });
    return (await runToolsOf({ ...context, tenant }, undefined)).map((tool) => tool.name).sort();
  };

  it("offers a tenant only its allowed tools, and others the file's default", async () => {
    const env = { AGENTQ_TENANT_POLICY_FILE: file };
    expect(await offered(env, 'acme')).toEqual(['calculator']);
    expect(await offered(env, 'globex')).toEqual(['calculator', 'current_time']);
  });

  it('without a policy file, every registered tool (the API door holds keyed callers)', async () => {
    expect(await offered({}, 'acme')).toEqual(['calculator', 'current_time']);
  });
});
