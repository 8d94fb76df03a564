import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TextMessage as Message } from '../../shared/contracts/run-record.js';
import {
  startScriptedOpenAIServer,
  type ScriptedChatRequest,
  type ScriptedOpenAIServer,
  type ScriptedResponse,
} from '../fakes/scripted-openai-server.js';
import { bearer, json, KEYS, startApiTestEnv, type ApiTestEnv } from '../helpers/api-test-env.js';
import { launchChromium } from '../helpers/chromium.js';
import { commitChainSteps, commitLongRun, type LongRunOptions } from '../helpers/long-run.js';
import { newRunId } from '../../shared/contracts/ids.js';

const STREAMED = Array.from({ length: 40 }, (_, index) => `word${index}`).join(' ');

/** The model of these runs, by the run's question: a tool run whose first call fails once, and a slow streamer. */
function script(request: ScriptedChatRequest): ScriptedResponse {
  const messages = request.body.messages as unknown as Message[];
  const query = messages.find((message) => message.role === 'user')?.content ?? '';
  const answered = messages.filter((message) => message.role === 'assistant').length;
  if (query.startsWith('tool')) {
    if (answered === 0 && !failedOnce.has(query)) {
      failedOnce.add(query);
      return { status: 503 };
    }
    return answered === 0
      ? { toolCalls: [{ name: 'calculator', arguments: { expression: '6*7' } }] }
      : { content: 'The answer is 42.' };
  }
  return { content: STREAMED, chunkDelayMs: 120 };
}
const failedOnce = new Set<string>();

describe('the run inspector in a browser', () => {
  let env: ApiTestEnv;
  let server: ScriptedOpenAIServer;
  let browser: Browser;
  let url: string;
  const shots = mkdtempSync(join(tmpdir(), 'agentq-inspector-'));
  const start = async (graph: string, input: unknown, key: string = KEYS.acmeProducer) => {
    const response = await env.as(key, { method: 'POST', url: '/v1/runs', payload: { graph, input } });
    expect(response.statusCode, response.body).toBe(202);
    return json(response).id as string;
  };
  const signIn = async (key: string): Promise<Page> => {
    const page = await browser.newPage({ viewport: { width: 1300, height: 1000 } });
    await page.goto(`${url}/runs`);
    expect(new URL(page.url()).pathname).toBe('/runs/login');
    await page.fill('#key', key);
    await Promise.all([page.waitForURL(`${url}/runs`), page.click('button[type=submit]')]);
    return page;
  };

  beforeAll(async () => {
    server = await startScriptedOpenAIServer({ script });
    env = await startApiTestEnv({
      env: {
        OPENAI_BASE_URL: server.url,
        LLM_MODEL: 'scripted-chat',
        AGENTQ_PRICES: 'scripted-chat:1:2',
      },
    });
    url = await env.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
    console.log(`inspector screenshots in ${shots}`);
  });
  afterAll(async () => {
    await browser?.close();
    await env?.close();
    await server?.close();
  });

  it('lists runs, and a run with a tool call and a retry shows its diagram, timeline bars, transcript and cost', async () => {
    const toolRun = await start('react-agent', { query: 'tool please', tools: ['calculator'] });
    expect((await env.client.wait(toolRun, { timeoutMs: 30_000 })).status).toBe('completed');
    const page = await signIn(KEYS.acmeProducer);
    await page.locator(`tr[data-run="${toolRun}"]`).waitFor();
    expect(await page.locator(`tr[data-run="${toolRun}"] .status`).textContent()).toBe('completed');
    await page.screenshot({ path: join(shots, 'runs-list.png'), fullPage: true });

    await page.click(`a[href="/runs/${toolRun}"]`);
    await page.locator('#status').waitFor();
    expect(await page.locator('#status').textContent()).toBe('completed');
    // Timeline: a failed (retried) attempt and successful ones, with queue-wait bars.
    expect(await page.locator('svg.timeline rect.bar-retry').count()).toBe(1);
    expect(await page.locator('svg.timeline rect.bar-ok').count()).toBe(3);
    expect(await page.locator('svg.timeline rect.bar-wait').count()).toBe(3);
    expect(await page.locator('svg.timeline g[data-step="s0.t0"] text').textContent()).toContain('2 attempts');
    // Diagram: the path taken, model → tool → model.
    expect(await page.locator('svg.diagram g.node-taken[data-node="tool"]').count()).toBe(1);
    expect(await page.locator('svg.diagram .edge-taken').count()).toBeGreaterThanOrEqual(3);
    // Transcript: the tool call with its arguments and its result.
    const transcript = await page.locator('#transcript').textContent();
    expect(transcript).toContain('calculator');
    expect(transcript).toContain('6*7');
    expect(transcript).toContain('The answer is 42.');
    expect(await page.locator('.msg-tool').textContent()).toContain('42');
    expect(await page.locator('table.usage').textContent()).toContain('total');
    await page.screenshot({ path: join(shots, 'run-tool-retry.png'), fullPage: true });
    await page.close();
  }, 60_000);

  it("a long run's page shows a window of its steps; the links move it, and the live refresh keeps it", async () => {
    const long: LongRunOptions = { runId: newRunId(), tenant: 'acme', steps: 400, message: 'line', complete: false };
    await commitLongRun(env.client.store, long);
    const page = await signIn(KEYS.acmeProducer);
    const window = page.locator('#steps-window');
    const shown = () => page.locator('details.step-detail').evaluateAll((all) => all.map((one) => one.dataset.index));
    await page.goto(`${url}/runs/${long.runId}`);
    expect(await page.locator('#status').textContent()).toBe('running');
    expect(await window.getAttribute('data-from')).toBe('350');
    expect(await shown()).toEqual(Array.from({ length: 50 }, (_, index) => String(350 + index)));
    await Promise.all([page.waitForURL(`${url}/runs/${long.runId}?steps=300`), page.click('#steps-earlier')]);
    expect(await shown()).toEqual(Array.from({ length: 50 }, (_, index) => String(300 + index)));
    await page.screenshot({ path: join(shots, 'run-long-window.png'), fullPage: true });
    // A step commits while the page is open: its sections refresh in the window it shows, with the new total.
    await commitChainSteps(env.client.store, long, 400, 401);
    await expect.poll(() => window.getAttribute('data-total'), { timeout: 15_000 }).toBe('401');
    expect(await window.getAttribute('data-from')).toBe('300');
    await Promise.all([page.waitForURL(`${url}/runs/${long.runId}?steps=350`), page.click('#steps-later')]);
    expect(await shown()).toEqual(Array.from({ length: 50 }, (_, index) => String(350 + index)));
    // From there "later" reaches the end: the latest window, without a position.
    await Promise.all([page.waitForURL(`${url}/runs/${long.runId}`), page.click('#steps-later')]);
    expect(await window.getAttribute('data-from')).toBe('351');
    await page.close();
  }, 60_000);

  it('shows tokens as they stream on a running run', async () => {
    const streaming = await start('react-agent', { query: 'stream please' });
    const page = await signIn(KEYS.acmeProducer);
    await page.goto(`${url}/runs/${streaming}`);
    const live = page.locator('#live .live-text');
    await live.first().waitFor({ timeout: 15_000 });
    const liveText = async () => (await live.first().textContent()) ?? '';
    await expect.poll(async () => (await liveText()).split(' ').length, { timeout: 15_000 }).toBeGreaterThanOrEqual(5);
    const early = await liveText();
    // A page that joins mid-answer shows the text from where it joined (earlier tokens are not stored).
    expect(STREAMED).toContain(early.trim());
    await page.screenshot({ path: join(shots, 'run-streaming.png'), fullPage: true });
    // More text arrives while the page is open.
    await expect.poll(async () => (await liveText()).length, { timeout: 15_000 }).toBeGreaterThan(early.length);
    // The page follows the run to its end without a reload.
    await expect.poll(() => page.locator('#status').textContent(), { timeout: 20_000 }).toBe('completed');
    expect(await page.locator('#transcript').textContent()).toContain('word39');
    await page.screenshot({ path: join(shots, 'run-streamed.png'), fullPage: true });
    await page.close();
  }, 60_000);

  it('cancel on a running run ends it cancelled; another tenant sees 404', async () => {
    const slow = await start('chain', { steps: 1, sleepMs: 30_000 });
    const page = await signIn(KEYS.acmeProducer);
    await page.goto(`${url}/runs/${slow}`);
    await expect.poll(() => page.locator('#status').textContent(), { timeout: 15_000 }).toBe('running');
    await page.click('#cancel');
    // The result comes back as a notice from the session (never from the URL).
    await expect.poll(() => page.locator('#notice').textContent(), { timeout: 15_000 }).toContain('cancel: the run is');
    expect(page.url()).toBe(`${url}/runs/${slow}`);
    await expect.poll(() => page.locator('#status').textContent(), { timeout: 15_000 }).toBe('cancelled');
    expect((await env.client.get(slow))?.status).toBe('cancelled');
    await page.screenshot({ path: join(shots, 'run-cancelled.png'), fullPage: true });
    await page.close();

    const foreign = await fetch(`${url}/runs/${slow}`, { headers: bearer(KEYS.globexProducer) });
    expect(foreign.status).toBe(404);
    expect((await fetch(`${url}/runs/${slow}/events`, { headers: bearer(KEYS.globexProducer) })).status).toBe(404);
    expect((await fetch(`${url}/runs/no-such-run`, { headers: bearer(KEYS.acmeProducer) })).status).toBe(404);
    const other = await signIn(KEYS.globexProducer);
    expect(await other.locator(`tr[data-run="${slow}"]`).count()).toBe(0);
    const response = await other.goto(`${url}/runs/${slow}`);
    expect(response?.status()).toBe(404);
    await other.close();
    // The admin sees every tenant's runs, signed in through the dashboard's own sign-in.
    const admin = await browser.newPage();
    await admin.goto(`${url}/admin/login`);
    await admin.fill('#key', KEYS.acmeAdmin);
    await Promise.all([admin.waitForURL(`${url}/admin/queues`), admin.click('button[type=submit]')]);
    await admin.goto(`${url}/runs`);
    expect(new URL(admin.url()).pathname).toBe('/runs');
    await admin.locator(`tr[data-run="${slow}"]`).waitFor();
    await admin.screenshot({ path: join(shots, 'runs-admin.png'), fullPage: true });
    await admin.close();
  }, 60_000);
});
