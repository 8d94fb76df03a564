import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Message } from '../../shared/contracts/run-record.js';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';
import { callLanguageModel } from '../../worker/agents/llm/call-language-model.js';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { json, KEYS, startApiTestEnv, type ApiTestEnv } from '../helpers/api-test-env.js';
import { launchChromium } from '../helpers/chromium.js';

/** `note@<version>`: one model call whose system prompt is the version's. */
function noteGraph(version: string, prompt: string) {
  return defineGraph({
    name: 'note',
    version,
    state: { topic: channel.replace(''), note: channel.replace('') },
    initialState: (input: { topic: string }) => ({ topic: input.topic }),
    output: (state) => ({ note: state.note }),
  })
    .node('write', async (state, context) => {
      const call = await callLanguageModel(context, {
        messages: [
          { role: 'system', content: prompt },
          { role: 'user', content: state.topic },
        ],
      });
      return { note: call.message.content ?? '' };
    })
    .edge(START, 'write')
    .edge('write', END)
    .build();
}

/** The run page's time travel in a browser: fork and replay buttons, lineage links, the replay's diff. */
describe('time travel on the run page', () => {
  let env: ApiTestEnv;
  let server: ScriptedOpenAIServer;
  let browser: Browser;
  let url: string;
  const signIn = async (): Promise<Page> => {
    const page = await browser.newPage({ viewport: { width: 1300, height: 1000 } });
    await page.goto(`${url}/runs/login`);
    await page.fill('#key', KEYS.acmeProducer);
    await Promise.all([page.waitForURL(`${url}/runs`), page.click('button[type=submit]')]);
    return page;
  };

  beforeAll(async () => {
    server = await startScriptedOpenAIServer({
      script: (request) => ({ content: `note by (${(request.body.messages[0] as Message).content})` }),
    });
    env = await startApiTestEnv({
      env: { OPENAI_BASE_URL: server.url, LLM_MODEL: 'scripted-chat' },
      graphs: [noteGraph('1', 'Be brief.'), noteGraph('2', 'Be <b>verbose</b>.')],
    });
    url = await env.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await env?.close();
    await server?.close();
  });

  it('Fork goes to the fork’s page, which links back to its original; Replay shows the divergence and its diff, escaped', async () => {
    const created = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/runs',
      payload: { graph: 'note', graphVersion: '1', input: { topic: 'queues' } },
    });
    const runId = json<{ id: string }>(created).id;
    expect((await env.client.wait(runId, { timeoutMs: 30_000 })).status).toBe('completed');
    const page = await signIn();
    await page.goto(`${url}/runs/${runId}`);
    await page.fill('#fork-step', '0');
    await page.fill('#fork-set', '{"topic": "retries"}');
    await Promise.all([page.waitForURL((target) => !target.pathname.endsWith(runId)), page.click('#fork')]);
    const forkId = decodeURIComponent(new URL(page.url()).pathname.split('/').at(-1)!);
    expect(await page.locator('#notice').textContent()).toContain(`forked from ${runId} at step 0`);
    expect(await page.locator('#fork-of').textContent()).toContain(
      `Forked from ${runId} at step 0 (state patched: topic)`,
    );
    expect(await page.locator(`#fork-of a[href="/runs/${runId}"]`).count()).toBe(1);
    expect((await env.client.wait(forkId, { timeoutMs: 30_000 })).status).toBe('completed');

    await page.goto(`${url}/runs/${runId}`);
    await page.fill('#replay-version', '2');
    await Promise.all([page.waitForURL((target) => !target.pathname.endsWith(runId)), page.click('#replay')]);
    const replayId = decodeURIComponent(new URL(page.url()).pathname.split('/').at(-1)!);
    await env.client.wait(replayId, { timeoutMs: 30_000 });
    await page.reload();
    expect(await page.locator('#replay-report').getAttribute('data-outcome')).toBe('diverged');
    expect(await page.locator('#replay-step').textContent()).toBe('0');
    const diff = await page.locator('#replay-diff').textContent();
    expect(diff).toContain('messages[0].content');
    expect(diff).toContain('Be brief.');
    // Recorded prompts are text on the page, never markup.
    expect(diff).toContain('Be <b>verbose</b>.');
    expect(await page.locator('#replay-diff b').count()).toBe(0);
    expect(await page.locator('#replay-of').textContent()).toContain(`Replay of ${runId}`);

    // A refused replay (a version nobody serves) comes back to the run page as its notice.
    await page.goto(`${url}/runs/${runId}`);
    await page.fill('#replay-version', '9');
    await Promise.all([page.waitForLoadState('load'), page.click('#replay')]);
    await expect.poll(() => page.locator('#notice').textContent()).toContain('replay: UNKNOWN_GRAPH');

    // The runs page filters by error code.
    await page.goto(`${url}/runs?status=failed&error=REPLAY_DIVERGED`);
    expect(await page.locator(`tr[data-run="${replayId}"]`).count()).toBe(1);
    expect(await page.locator(`tr[data-run="${runId}"]`).count()).toBe(0);
    await page.goto(`${url}/runs?error=PROVIDER_ERROR`);
    expect(await page.locator(`tr[data-run="${replayId}"]`).count()).toBe(0);
    await page.close();
  }, 60_000);
});
