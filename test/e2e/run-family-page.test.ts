import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, KEYS, startApiTestEnv, type ApiTestEnv } from '../helpers/api-test-env.js';
import { childDoubleGraph, parentSumGraph } from '../helpers/child-run-graphs.js';
import { launchChromium } from '../helpers/chromium.js';

describe('the run page links a parent and its child runs, in a browser', () => {
  let env: ApiTestEnv;
  let browser: Browser;
  let url: string;
  beforeAll(async () => {
    env = await startApiTestEnv({ graphs: [childDoubleGraph(), parentSumGraph()] });
    url = await env.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await env?.close();
  });

  async function signedIn(): Promise<Page> {
    const page = await browser.newPage();
    await page.goto(`${url}/runs/login`);
    await page.fill('#key', KEYS.acmeProducer);
    await Promise.all([page.waitForURL(`${url}/runs`), page.click('button[type=submit]')]);
    return page;
  }

  it('lists each child with its graph and status, links to it, and the child links back to its parent', async () => {
    // Through the API, as the key's tenant (the page shows that tenant's runs).
    const created = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/runs',
      payload: { graph: 'parent-sum', input: { ns: [1, 2, 3] } },
    });
    const parent = json<{ id: string }>(created);
    const done = await env.client.wait(parent.id, { timeoutMs: 30_000 });
    expect(done.output).toMatchObject({ sum: 12 });
    const page = await signedIn();
    await page.goto(`${url}/runs/${parent.id}`);
    const rows = page.locator('#child-runs tr:has(a.child-run)');
    expect(await rows.count()).toBe(3);
    const cells = await rows.evaluateAll((trs) =>
      trs.map((tr) => Array.from(tr.querySelectorAll('td'), (td) => td.textContent?.trim() ?? '')),
    );
    for (const [, graph, status, , waited] of cells)
      expect([graph, status, waited]).toEqual(['child-double', 'completed', 'yes']);
    const childIds = cells.map(([id]) => id);
    const outputs = await Promise.all(childIds.map(async (id) => (await env.client.get(id!))?.output));
    expect(outputs).toEqual(expect.arrayContaining([{ doubled: 2 }, { doubled: 4 }, { doubled: 6 }]));

    await Promise.all([page.waitForURL(`${url}/runs/${childIds[0]}`), rows.first().locator('a.child-run').click()]);
    expect(await page.locator('#parent-run').textContent()).toBe(parent.id);
    await Promise.all([page.waitForURL(`${url}/runs/${parent.id}`), page.click('#parent-run')]);
    expect(await page.locator('#child-runs a.child-run').count()).toBe(3);
    await page.close();
  });
});
