import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { json, KEYS, startApiTestEnv, type ApiTestEnv } from '../helpers/api-test-env.js';
import { launchChromium } from '../helpers/chromium.js';
import { loadScaledMs } from '../helpers/load-scale.js';
import { eventually } from '../helpers/test-env.js';
import { twoTurnGraph } from '../helpers/two-turn-graph.js';

/**
 * The provider's Batch API in a browser: the batch page lists its provider batches and costs; the run page says a step
 * waits on one.
 */
describe('provider batches in the inspector pages', () => {
  let env: ApiTestEnv;
  let server: ScriptedOpenAIServer;
  let browser: Browser;
  let url: string;
  let holdFirst = true;
  const signIn = async (): Promise<Page> => {
    const page = await browser.newPage({ viewport: { width: 1300, height: 1000 } });
    await page.goto(`${url}/runs`);
    await page.fill('#key', KEYS.acmeProducer);
    await Promise.all([page.waitForURL(`${url}/runs`), page.click('button[type=submit]')]);
    return page;
  };

  beforeAll(async () => {
    server = await startScriptedOpenAIServer({
      script: () => ({ content: 'ok', usage: { prompt_tokens: 500, completion_tokens: 50 } }),
      // The first provider batch (the draft steps) stays in flight until the run page has been read: on a
      // busy machine the page can take longer than any fixed processing time, and the run would have moved on.
      batchApi: { processingMs: 4000, hold: (_batch, index) => index === 0 && holdFirst },
    });
    env = await startApiTestEnv({
      graphs: [twoTurnGraph()],
      env: {
        OPENAI_BASE_URL: server.url,
        LLM_MODEL: 'scripted-chat',
        AGENTQ_PRICES: 'scripted-chat:1:2',
        AGENTQ_PROVIDER_BATCH_POLL_MS: '200',
      },
    });
    url = await env.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await env?.close();
    await server?.close();
  });

  it('a parked step shows as waiting on its provider batch; the batch page lists provider batches and costs', async () => {
    const created = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/batches',
      payload: {
        questions: [{ question: 'one' }, { question: 'two' }],
        options: { graph: 'two-turns' },
        providerBatch: true,
      },
    });
    expect(created.statusCode, created.body).toBe(202);
    const batchId = json(created).id as string;
    const runId = `${batchId}.i0`;
    await eventually(
      async () => server.batchApi!.batches.length === 1,
      loadScaledMs(10_000),
      'the first provider batch',
    );
    const page = await signIn();
    await page.goto(`${url}/runs/${runId}`);
    const notice = await page.textContent('#parked');
    expect(notice).toMatch(/Step s0\.t0 \(draft\) is waiting on its provider batch of batch bat_\w+/);
    expect(notice).toMatch(new RegExp(`Request ${runId.replace(/\./g, '\\.')}\\|s0\\.t0\\|model\\|1`));
    await page.click('#parked a');
    expect(new URL(page.url()).pathname).toBe(`/batches/${batchId}`);
    expect(await page.textContent('#parked')).toBe('2');
    expect(await page.locator('#provider-batches tr.provider-batch').count()).toBe(1);
    holdFirst = false;

    await eventually(async () => {
      const body = json<{ status: string }>(
        await env.as(KEYS.acmeProducer, { method: 'GET', url: `/v1/batches/${batchId}` }),
      );
      return body.status === 'completed';
    }, loadScaledMs(30_000));
    await page.goto(`${url}/batches/${batchId}`);
    const rows = page.locator('#provider-batches tr.provider-batch');
    expect(await rows.count()).toBe(2);
    expect(await rows.first().getAttribute('data-status')).toBe('completed');
    expect(await rows.first().textContent()).toMatch(/batch_scripted_\d+completed220/);
    // 4 answers of 500 + 50 tokens: live (1 and 2 USD per 1M) 0.0024, at batch prices half of it.
    expect(await page.textContent('#live-cost')).toBe('$0.00240');
    expect(await page.textContent('#batch-cost')).toBe('$0.00120');
    await page.goto(`${url}/runs/${runId}`);
    expect(await page.locator('#parked').count()).toBe(0);
  });
});
