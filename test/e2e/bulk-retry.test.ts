import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../shared/contracts/run-record.js';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';
import { callLanguageModel } from '../../worker/agents/llm/call-language-model.js';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { cliEnv, runCli } from '../helpers/run-cli.js';
import { Calls, threeStepGraph } from '../helpers/test-graphs.js';
import { startTestEnv, type TestEnv } from '../helpers/test-env.js';

/** `ask`: one model call, one attempt (a 503 fails the run with PROVIDER_ERROR at once). */
const askGraph = defineGraph({
  name: 'ask',
  state: { question: channel.replace(''), answer: channel.replace('') },
  initialState: (input: { question: string }) => ({ question: input.question }),
  output: (state) => ({ answer: state.answer }),
})
  .node(
    'ask',
    async (state, context) => {
      const call = await callLanguageModel(context, { messages: [{ role: 'user', content: state.question }] });
      return { answer: call.message.content ?? '' };
    },
    { retry: { maxAttempts: 1 } },
  )
  .edge(START, 'ask')
  .edge('ask', END)
  .build();

/** Failed runs in bulk: the dead letters of a scripted provider outage, listed and retried. */
describe('bulk retry of failed runs', () => {
  let server: ScriptedOpenAIServer;
  let env: TestEnv;
  let outage = true;
  const failing = new Set<string>();
  beforeAll(async () => {
    server = await startScriptedOpenAIServer({
      script: () => (outage ? { status: 503, message: 'the provider is down' } : { content: 'answered' }),
    });
    env = await startTestEnv({
      env: { OPENAI_BASE_URL: server.url, LLM_MODEL: 'scripted-chat' },
      graphs: [askGraph, threeStepGraph(new Calls(), failing)],
    });
  });
  afterAll(async () => {
    await env.close();
    await server.close();
  });

  const failRuns = async (count: number): Promise<RunRecord[]> => {
    const queued = await Promise.all(
      Array.from({ length: count }, (_, i) => env.client.enqueue({ graph: 'ask', input: { question: `q${i}` } })),
    );
    return Promise.all(queued.map((run) => env.client.wait(run.id, { timeoutMs: 30_000 })));
  };

  it('lists failed runs by error code and time; a dry run counts them; two racing retries retry each run once, from its failed step', async () => {
    outage = true;
    const failed = await failRuns(6);
    expect(failed.every((run) => run.status === 'failed' && run.error?.code === 'PROVIDER_ERROR')).toBe(true);
    // Another failure, with another code: not a match for --error PROVIDER_ERROR.
    const other = await env.client.enqueue({ graph: 'three', input: null, runId: 'other-failure' });
    failing.add(other.id);
    expect((await env.client.wait(other.id, { timeoutMs: 30_000 })).error?.code).toBe('TOOL_ERROR');

    const listed = await env.client.list({
      status: 'failed',
      errorCode: 'PROVIDER_ERROR',
      since: Date.now() - 3_600_000,
    });
    expect(listed.runs.map((run) => run.id).sort()).toEqual(failed.map((run) => run.id).sort());
    expect((await env.client.list({ status: 'failed', since: Date.now() + 60_000 })).runs).toEqual([]);
    expect((await env.client.list({ status: 'failed', graph: 'three' })).runs.map((run) => run.id)).toEqual([other.id]);

    const dry = await env.client.retryFailed({ errorCode: 'PROVIDER_ERROR' }, { dryRun: true });
    expect(dry).toMatchObject({ dryRun: true, matched: 6, retried: [] });
    expect((await env.client.get(failed[0]!.id))?.status).toBe('failed');

    outage = false;
    const requestsBefore = server.chatRequests().length;
    const [first, second] = await Promise.all([
      env.client.retryFailed({ errorCode: 'PROVIDER_ERROR' }, { ratePerSecond: 50 }),
      env.client.retryFailed({ errorCode: 'PROVIDER_ERROR' }, { ratePerSecond: 50 }),
    ]);
    const retried = [...first.retried, ...second.retried].sort();
    expect(retried).toEqual(failed.map((run) => run.id).sort());
    expect(first.skipped.length + second.skipped.length).toBe(6);
    expect([...first.errors, ...second.errors]).toEqual([]);
    const done = await Promise.all(failed.map((run) => env.client.wait(run.id, { timeoutMs: 30_000 })));
    for (const run of done) {
      expect(run).toMatchObject({ status: 'completed', output: { answer: 'answered' } });
      // The link to the earlier attempt: one attempt before, its error, when it failed.
      expect(run.retryOf).toMatchObject({
        attempts: 1,
        error: { code: 'PROVIDER_ERROR' },
        failedAt: expect.any(Number),
      });
    }
    // Each run asked the model once more: none was retried twice.
    expect(server.chatRequests().length - requestsBefore).toBe(6);
    expect((await env.client.get(other.id))?.status).toBe('failed');
  });

  it('a retry names the failure it matched: a run that was retried and failed again since is skipped, not retried twice', async () => {
    outage = true;
    const [run] = await failRuns(1);
    // Another command retried it meanwhile, and it failed again.
    await env.client.retry(run!.id);
    const again = await env.client.wait(run!.id, { timeoutMs: 30_000 });
    expect(again).toMatchObject({ status: 'failed', retryOf: { attempts: 1 } });
    await expect(env.client.retry(run!.id, { failedAt: Date.parse(run!.finishedAt!) })).rejects.toMatchObject({
      code: 'CONFLICT',
      message: expect.stringContaining('was retried since'),
    });
    expect((await env.client.get(run!.id))?.status).toBe('failed');
    await env.client.purge(run!.id); // not a match of the next test
  });

  it('agentq runs --status failed --error --since and two racing `agentq retry` commands: a count first, each run retried once', async () => {
    outage = true;
    const failed = await failRuns(4);
    const cli = (args: string[]) => runCli(args, cliEnv(env.config));
    const listed = await cli(['runs', '--status', 'failed', '--error', 'PROVIDER_ERROR', '--since', '5m', '--json']);
    expect(listed.code).toBe(0);
    const ids = (JSON.parse(listed.stdout) as { runs: RunRecord[] }).runs.map((run) => run.id);
    expect(ids.sort()).toEqual(failed.map((run) => run.id).sort());

    const dry = await cli(['retry', '--status', 'failed', '--error', 'PROVIDER_ERROR', '--since', '5m', '--dry-run']);
    expect(dry.stderr).toContain('4 failed runs match (dry run: nothing retried)');
    expect(dry.stdout.trim().split('\n').sort()).toEqual(ids);

    outage = false;
    const args = [
      'retry',
      '--status',
      'failed',
      '--error',
      'PROVIDER_ERROR',
      '--since',
      '5m',
      '--rate',
      '20',
      '--json',
    ];
    const [a, b] = await Promise.all([cli(args), cli(args)]);
    expect([a.code, b.code]).toEqual([0, 0]);
    expect(a.stderr).toMatch(/failed runs? match/);
    const summaries = [JSON.parse(a.stdout), JSON.parse(b.stdout)] as { retried: string[] }[];
    expect(summaries.flatMap((summary) => summary.retried).sort()).toEqual(ids);
    for (const id of ids)
      expect(await env.client.wait(id, { timeoutMs: 30_000 })).toMatchObject({ status: 'completed' });

    const usage = await cli(['retry', '--status', 'completed']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('retry in bulk takes --status failed');
  });
});
