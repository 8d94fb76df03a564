import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentqQueueNames } from '../../producer/api/agentq-queue-names.js';
import { json, KEYS, startApiTestEnv, type ApiTestEnv } from '../helpers/api-test-env.js';
import { launchChromium } from '../helpers/chromium.js';

const artifacts = fileURLToPath(new URL('../artifacts/', import.meta.url));

describe('the dashboard in a browser', () => {
  let env: ApiTestEnv;
  let browser: Browser | undefined;
  let url: string;
  beforeAll(async () => {
    env = await startApiTestEnv();
    url = await env.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await env?.close();
  });

  it('signs in with the admin key and shows every agentq queue, with the completed step jobs of a run', async () => {
    const created = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/runs',
      payload: { graph: 'chain', input: { steps: 2 } },
    });
    const runId = json(created).id as string;
    expect((await env.client.wait(runId)).status).toBe('completed');

    const page = await browser!.newPage({ viewport: { width: 1440, height: 900 } });
    // Bull Board runs under a Content-Security-Policy of its own: anything it blocks is reported here.
    await page.addInitScript(`
      window.__violations = [];
      document.addEventListener('securitypolicyviolation', function (event) {
        window.__violations.push(event.violatedDirective + ' ' + event.blockedURI);
      });
    `);
    await page.goto(`${url}/admin/queues`);
    expect(new URL(page.url()).pathname).toBe('/admin/login');
    await page.fill('#key', KEYS.acmeAdmin);
    await Promise.all([page.waitForURL(`${url}/admin/queues`), page.click('button[type=submit]')]);
    for (const name of agentqQueueNames())
      await page.getByText(name, { exact: true }).first().waitFor({ timeout: 15_000 });
    // The overview's queue cards (one per queue, with its job count) load after the menu.
    await page.getByText('2 Jobs').first().waitFor({ timeout: 15_000 });
    expect(await page.getByText(/^\d+ Jobs?$/).count()).toBe(agentqQueueNames().length);
    mkdirSync(artifacts, { recursive: true });
    await page.screenshot({ path: `${artifacts}dashboard-overview.png`, fullPage: true });

    await page.goto(`${url}/admin/queues/queue/agentq-steps?status=completed`);
    await page.getByText(`${runId}.s1.t0`).first().waitFor({ timeout: 15_000 });
    expect(await page.getByText(`${runId}.s0.t0`).count()).toBeGreaterThan(0);
    await page.screenshot({ path: `${artifacts}dashboard.png`, fullPage: true });
    expect(await page.evaluate('window.__violations')).toEqual([]);

    // The admin's sign-in also opens the API docs (Swagger UI, under its own policy).
    await page.goto(`${url}/docs`);
    await page.getByText('agentq API').first().waitFor({ timeout: 15_000 });
    await page.getByText('/v1/runs').first().waitFor({ timeout: 15_000 });
    expect(await page.evaluate('window.__violations')).toEqual([]);

    // The session cookie is HttpOnly: page scripts cannot read it.
    expect(String(await page.evaluate('document.cookie'))).not.toContain('agentq_session');
    const cookies = await page.context().cookies();
    expect(cookies.find((cookie) => cookie.name === 'agentq_session')).toMatchObject({
      httpOnly: true,
      sameSite: 'Strict',
      path: '/admin',
    });
    await page.close();
  });
});
