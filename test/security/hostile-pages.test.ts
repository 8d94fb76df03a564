import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentqError } from '../../shared/contracts/errors.js';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { json, KEYS, startApiTestEnv, type ApiTestEnv } from '../helpers/api-test-env.js';
import { launchChromium } from '../helpers/chromium.js';
import { echoRagGraph } from '../helpers/echo-rag-graph.js';
import { eventually } from '../helpers/test-env.js';

/**
 * Attack: values an attacker controls (a model's answer, a run's input, output and citations, an
 * interrupt's question, an error message, batch questions, query and path parameters, the sign-in's
 * `next`) carry markup that would run script if a page spliced it in unescaped: `<img onerror>`,
 * `"><script>` out of an attribute, `</script>` out of embedded JSON, `javascript:` as a link target.
 * Expected answer: real chromium renders every page with the values as text; no payload runs (the
 * `window.__pwned` canary stays unset), the Content-Security-Policy reports no blocked script (which
 * would mean markup got in and only the policy stopped it), and no link leaves http(s).
 */
const PAYLOADS = [
  `<img src=x onerror="window.__pwned='img'">`,
  `"><script>window.__pwned='attribute'</script>`,
  `'><svg onload="window.__pwned='svg'">`,
  `</script><script>window.__pwned='json'</script>`,
  `javascript:window.__pwned='link'`,
  `</title></textarea><script>window.__pwned='title'</script>`,
];
const HOSTILE = PAYLOADS.join(' ');
/** Within the 128 characters of a graph filter and a run id's path segment. */
const SHORT = `${PAYLOADS[1]}${PAYLOADS[0]}`;

/** Keeps the canary and the policy's reports where the test can read them, before any page script runs. */
const WATCH = `
  window.__violations = [];
  document.addEventListener('securitypolicyviolation', function (event) {
    window.__violations.push(event.violatedDirective + ' ' + event.blockedURI);
  });
`;

const hostileGraph = defineGraph({
  name: 'hostile',
  state: { note: channel.replace(''), answer: channel.replace('') },
  initialState: (input: unknown) => ({ note: (input as { note: string }).note }),
  output: (state) => ({
    answer: state.answer,
    sources: [{ title: HOSTILE, path: PAYLOADS[4], page: null, score: 1 }],
  }),
})
  .node('echo', (state) => ({ answer: `${state.note}` }))
  .edge(START, 'echo')
  .edge('echo', END)
  .build();

const askGraph = defineGraph({ name: 'hostile-ask', state: { answer: channel.replace('') } })
  .node('ask', (_state, context) => ({ answer: String(context.interrupt({ question: HOSTILE })) }))
  .edge(START, 'ask')
  .edge('ask', END)
  .build();

const failGraph = defineGraph({ name: 'hostile-fail', state: { answer: channel.replace('') } })
  .node('fail', () => {
    throw new AgentqError('TOOL_ERROR', HOSTILE, { retryable: false });
  })
  .edge(START, 'fail')
  .edge('fail', END)
  .build();

describe('pages with hostile values in real chromium: nothing runs', () => {
  let env: ApiTestEnv;
  let model: ScriptedOpenAIServer;
  let browser: Browser;
  let url: string;
  const runs: Record<string, string> = {};
  let batchId = '';

  const start = async (graph: string, input: unknown) => {
    const response = await env.as(KEYS.acmeProducer, { method: 'POST', url: '/v1/runs', payload: { graph, input } });
    expect(response.statusCode, response.body).toBe(202);
    return json(response).id as string;
  };

  beforeAll(async () => {
    model = await startScriptedOpenAIServer({ script: () => ({ content: HOSTILE }) });
    env = await startApiTestEnv({
      graphs: [hostileGraph, askGraph, failGraph, echoRagGraph()],
      env: { OPENAI_BASE_URL: model.url, LLM_MODEL: 'scripted-chat', AGENTQ_LLM_STREAM: 'false' },
    });
    url = await env.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
    runs.output = await start('hostile', { note: HOSTILE });
    runs.waiting = await start('hostile-ask', { note: HOSTILE });
    runs.failed = await start('hostile-fail', { note: HOSTILE });
    runs.transcript = await start('react-agent', { query: HOSTILE });
    for (const id of [runs.output, runs.failed, runs.transcript]) await env.client.wait(id!, { timeoutMs: 30_000 });
    await eventually(async () => (await env.client.get(runs.waiting!))?.status === 'waiting', 20_000);
    const batch = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/batches',
      payload: {
        collection: 'docs',
        questions: PAYLOADS.map((question, index) => ({ id: `q${index}`, question })),
        options: { concurrency: 2, graph: 'echo-rag' },
      },
    });
    batchId = json(batch).id as string;
    await eventually(
      async () =>
        json(await env.as(KEYS.acmeProducer, { method: 'GET', url: `/v1/batches/${batchId}` })).status === 'completed',
      30_000,
    );
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await env?.close();
    await model?.close();
  });

  /** Visits `path` in `page`: the answer's headers, and what ran. */
  async function visit(page: Page, path: string) {
    const response = await page.goto(`${url}${path}`);
    await page.waitForLoadState('load');
    const seen = (await page.evaluate(`({
      pwned: window.__pwned ?? null,
      violations: window.__violations,
      text: document.body.innerText,
      links: [...document.querySelectorAll('a[href]')].map((a) => a.href),
      actions: [...document.querySelectorAll('form')].map((form) => form.action),
    })`)) as { pwned: string | null; violations: string[]; text: string; links: string[]; actions: string[] };
    return { headers: response?.headers() ?? {}, status: response?.status(), ...seen };
  }

  async function signedIn(key: string): Promise<Page> {
    const page = await browser.newPage();
    await page.addInitScript(WATCH);
    page.on('dialog', (dialog) => {
      throw new Error(`a payload opened a dialog: ${dialog.message()}`);
    });
    await page.goto(`${url}/runs/login`);
    await page.fill('#key', key);
    await Promise.all([page.waitForURL(`${url}/runs`), page.click('button[type=submit]')]);
    return page;
  }

  it('no payload runs on any page, each shows the hostile text as text, under a CSP with scripts from self only', async () => {
    const page = await signedIn(KEYS.acmeProducer);
    const pages: { path: string; shows: boolean }[] = [
      { path: `/runs?graph=${encodeURIComponent(SHORT)}`, shows: false },
      { path: `/runs/${runs.output}`, shows: true },
      { path: `/runs/${runs.waiting}`, shows: true },
      { path: `/runs/${runs.failed}`, shows: true },
      { path: `/runs/${runs.transcript}`, shows: true },
      { path: `/runs/${encodeURIComponent(SHORT)}`, shows: true },
      { path: `/batches/${batchId}`, shows: true },
      { path: `/runs/logout`, shows: false },
    ];
    for (const { path, shows } of pages) {
      const seen = await visit(page, path);
      expect(seen.headers['content-type'], path).toMatch(/^text\/html/);
      expect(seen.pwned, path).toBeNull();
      expect(seen.violations, path).toEqual([]);
      expect(seen.headers['content-security-policy'], path).toMatch(/script-src 'self'(;|$)/);
      expect(seen.headers['content-security-policy'], path).toContain("frame-ancestors 'none'");
      // As text: in JSON blocks the payloads' quotes are escaped, so look for a quote-free part of them.
      if (shows) expect(seen.text, path).toContain('<img src=x onerror=');
      for (const target of [...seen.links, ...seen.actions])
        expect(new URL(target).protocol, `${path}: ${target}`).toBe('http:');
    }
    // The graph filter keeps the hostile text as the input's value.
    const filtered = await visit(page, `/runs?graph=${encodeURIComponent(SHORT)}`);
    expect(filtered.status).toBe(200);
    expect(await page.inputValue('#graph-filter')).toBe(SHORT);
    await page.close();
  }, 120_000);

  it('the sign-in pages keep a hostile `next` and a wrong key as text; a `notice` in the URL shows nothing', async () => {
    const page = await browser.newPage();
    await page.addInitScript(WATCH);
    for (const path of ['/runs/login', '/admin/login']) {
      const next = `${path === '/runs/login' ? '/runs' : '/admin/queues'}?x=${HOSTILE.replaceAll(' ', '')}`;
      const seen = await visit(page, `${path}?next=${encodeURIComponent(next)}`);
      expect(seen.pwned, path).toBeNull();
      expect(seen.violations, path).toEqual([]);
      expect(seen.headers['content-security-policy'], path).toMatch(/script-src 'self'(;|$)/);
      expect(await page.inputValue('input[name=next]')).toBe(next);
      await page.fill('#key', HOSTILE);
      await page.click('button[type=submit]');
      await page.waitForLoadState('load');
      expect(await page.evaluate('window.__pwned ?? null'), path).toBeNull();
      expect(await page.locator('.problem').textContent()).toBe('That key is not valid.');
    }
    await page.close();

    // An outside link with a `notice` cannot put words of its own on a real run page.
    const signed = await signedIn(KEYS.acmeProducer);
    const seen = await visit(
      signed,
      `/runs/${runs.output}?notice=${encodeURIComponent('Your key leaked: call +1 555 0100')}`,
    );
    expect(seen.text).not.toContain('Your key leaked');
    expect(await signed.locator('#notice').count()).toBe(0);
    await signed.close();
  }, 60_000);
});
