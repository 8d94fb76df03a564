import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../shared/contracts/run-record.js';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { cliEnv, runCli } from '../helpers/run-cli.js';
import { calculatorScript } from '../helpers/time-travel-scripts.js';
import { startTestEnv, type TestEnv } from '../helpers/test-env.js';

/** `agentq fork` and `agentq replay` as a user types them. */
describe('agentq fork and agentq replay', () => {
  let server: ScriptedOpenAIServer;
  let env: TestEnv;
  let original: RunRecord;
  const cli = (...args: string[]) => runCli(args, cliEnv(env.config));
  beforeAll(async () => {
    server = await startScriptedOpenAIServer({ script: calculatorScript });
    env = await startTestEnv({ env: { OPENAI_BASE_URL: server.url, LLM_MODEL: 'scripted-chat' } });
    original = await env.client.wait(
      (await env.client.enqueue({ graph: 'react-agent', input: { query: 'what is 6*7?', tools: ['calculator'] } })).id,
      { timeoutMs: 30_000 },
    );
  });
  afterAll(async () => {
    await env.close();
    await server.close();
  });

  it('fork --wait --json prints only the fork’s final record; steps marks the inherited ones', async () => {
    const forked = await cli('fork', original.id, '--from', '2', '--set', 'answer="draft"', '--wait', '--json');
    expect(forked.code, forked.stderr).toBe(0);
    const record = JSON.parse(forked.stdout) as RunRecord;
    expect(record).toMatchObject({
      status: 'completed',
      forkOf: { runId: original.id, step: 2, patched: ['answer'] },
      output: { answer: 'the answer is 42' },
    });
    const steps = await cli('steps', record.id);
    expect(
      steps.stdout
        .trim()
        .split('\n')
        .map((line) => line.includes(`inherited from ${original.id}`)),
    ).toEqual([true, true, false]);
    const unknown = await cli('fork', original.id, '--from', '7');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain(`run ${original.id} has no step 7`);
    const usage = await cli('fork', original.id, '--from', 'last');
    expect(usage.code).toBe(2);
  });

  it('replay --json prints one report object (diverged: false) and exits 0; two runs print a summary', async () => {
    const before = server.chatRequests().length;
    const replayed = await cli('replay', original.id, '--json');
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(JSON.parse(replayed.stdout)).toMatchObject({ replayOf: original.id, diverged: false, outcome: 'same' });
    const two = await cli('replay', original.id, original.id);
    expect(two.code, two.stderr).toBe(0);
    expect(two.stdout).toContain('2 replayed: 2 same, 0 diverged, 0 failed');
    expect(server.chatRequests().length).toBe(before);
    const none = await cli('replay');
    expect(none.code).toBe(2);
  });
});
