import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { createApi, type ApiInstance } from '../../producer/api/create-api.js';
import { READ_BOUNDS } from '../../producer/api/read-bounds.js';
import { RunReader } from '../../producer/client/run-reader.js';
import { newRunId } from '../../shared/contracts/ids.js';
import type { Message, StepRecord } from '../../shared/contracts/run-record.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { API_KEYS_ENV, bearer, json, KEYS } from '../helpers/api-test-env.js';
import { commitLongRun } from '../helpers/long-run.js';
import { testConfig } from '../helpers/test-env.js';

const STEPS = 20_000;
/** What one view of the run page may weigh, whatever the run's length (a 50-step window of short steps is ~100 KB). */
const PAGE_BYTES = 256 * 1024;
/** What one page of the steps or messages API may weigh: 1,000 short items. */
const API_PAGE_BYTES = 512 * 1024;

type Page<T> = { nextCursor: string | null; total: number } & T;

/**
 * A 20,000-step run's page and its steps and messages APIs answer a bounded window of the run, and their
 * links and cursors lead through the rest: the page and each API page stay under a byte cap however long
 * the run is.
 */
describe('bounded pages and reads of a long run', () => {
  const config = testConfig({ AGENTQ_API_KEYS: API_KEYS_ENV });
  const reader = new RunReader({ config });
  let app: ApiInstance;
  const runId = newRunId();
  const get = (url: string): Promise<LightMyRequestResponse> =>
    app.inject({ method: 'GET', url, headers: bearer(KEYS.acmeProducer) });

  beforeAll(async () => {
    app = await createApi({ config, logger: createLogger(config.logLevel) });
    // Another run of the graph first: the page's diagram reads recent runs of the graph too.
    await commitLongRun(reader.store, { runId: newRunId(), tenant: 'acme', steps: 3000, message: 'other' });
    await commitLongRun(reader.store, { runId, tenant: 'acme', steps: STEPS, message: 'answer' });
  }, 180_000);
  afterAll(async () => {
    await app?.close();
    await reader.close();
  });

  it('the run page shows the latest steps and messages under a byte cap; "earlier" links lead to the windows before', async () => {
    const page = await get(`/runs/${runId}`);
    expect(page.statusCode).toBe(200);
    expect(page.rawPayload.length).toBeLessThan(PAGE_BYTES);
    const window = /id="steps-window" data-from="(\d+)" data-total="(\d+)"/.exec(page.body);
    expect(window?.slice(1)).toEqual([String(STEPS - READ_BOUNDS.pageSteps), String(STEPS)]);
    expect(shownSteps(page.body)).toEqual(range(STEPS - READ_BOUNDS.pageSteps, STEPS));
    expect(page.body).not.toContain('id="steps-later"');

    const earlier = linkOf(page.body, 'steps-earlier');
    expect(earlier).toBe(`/runs/${runId}?steps=${STEPS - 2 * READ_BOUNDS.pageSteps}`);
    const before = await get(earlier);
    expect(before.statusCode).toBe(200);
    expect(before.rawPayload.length).toBeLessThan(PAGE_BYTES);
    expect(shownSteps(before.body)).toEqual(range(STEPS - 2 * READ_BOUNDS.pageSteps, STEPS - READ_BOUNDS.pageSteps));
    // Back to the latest from there: "later" reaches the end, so it is the page without a window.
    expect(linkOf(before.body, 'steps-later')).toBe(`/runs/${runId}`);

    // The transcript pages the same way, keeping the steps' window.
    expect(shownMessages(page.body)).toEqual(range(STEPS - READ_BOUNDS.pageMessages, STEPS));
    const olderMessages = linkOf(before.body, 'messages-earlier');
    expect(olderMessages).toBe(
      `/runs/${runId}?steps=${STEPS - 2 * READ_BOUNDS.pageSteps}&messages=${STEPS - 2 * READ_BOUNDS.pageMessages}`,
    );
    const both = await get(olderMessages);
    expect(shownMessages(both.body)).toEqual(
      range(STEPS - 2 * READ_BOUNDS.pageMessages, STEPS - READ_BOUNDS.pageMessages),
    );
    expect(both.body).toContain(`answer ${STEPS - 2 * READ_BOUNDS.pageMessages}<`);

    // The first window has no "earlier"; a position past the end shows an empty window, not an error.
    const first = await get(`/runs/${runId}?steps=0`);
    expect(shownSteps(first.body)).toEqual(range(0, READ_BOUNDS.pageSteps));
    expect(first.body).not.toContain('id="steps-earlier"');
    const past = await get(`/runs/${runId}?steps=99999999`);
    expect(past.statusCode).toBe(200);
    expect(shownSteps(past.body)).toEqual([]);
    expect(past.body).toContain(`no steps past ${STEPS}`);
    expect(linkOf(past.body, 'steps-earlier')).toBe(`/runs/${runId}?steps=${STEPS - READ_BOUNDS.pageSteps}`);
    expect((await get(`/runs/${runId}?steps=-1`)).statusCode).toBe(400);
  });

  it('the steps API answers pages of at most 1,000 steps whose cursors lead through all 20,000 once each', async () => {
    const indexes: number[] = [];
    let url = `/v1/runs/${runId}/steps`;
    for (let pages = 0; ; pages += 1) {
      expect(pages).toBeLessThanOrEqual(STEPS / READ_BOUNDS.apiItems);
      const response = await get(url);
      expect(response.statusCode).toBe(200);
      expect(response.rawPayload.length).toBeLessThan(API_PAGE_BYTES);
      const body = json<Page<{ steps: StepRecord[] }>>(response);
      expect(body.total).toBe(STEPS);
      expect(body.steps.length).toBe(body.nextCursor === null ? STEPS % READ_BOUNDS.apiItems || 1000 : 1000);
      indexes.push(...body.steps.map((step) => step.index));
      if (body.nextCursor === null) break;
      url = `/v1/runs/${runId}/steps?cursor=${body.nextCursor}`;
    }
    expect(indexes).toEqual(range(0, STEPS));

    const small = json<Page<{ steps: StepRecord[] }>>(await get(`/v1/runs/${runId}/steps?cursor=19990&limit=7`));
    expect(small.steps.map((step) => step.index)).toEqual(range(19_990, 19_997));
    expect(small.nextCursor).toBe('19997');
    expect((await get(`/v1/runs/${runId}/steps?limit=1001`)).statusCode).toBe(400);
    expect((await get(`/v1/runs/${runId}/steps?cursor=abc`)).statusCode).toBe(400);
    const past = json<Page<{ steps: StepRecord[] }>>(await get(`/v1/runs/${runId}/steps?cursor=${STEPS}`));
    expect(past).toEqual({ steps: [], nextCursor: null, total: STEPS });

    // The library's RunReader reads the same pages.
    const tail = await reader.stepPage(runId, { cursor: '19998' });
    expect(tail).toMatchObject({ nextCursor: null, total: STEPS });
    expect(tail.steps.map((step) => step.index)).toEqual([19_998, 19_999]);
    expect((await reader.messagePage(runId, { limit: 3 })).nextCursor).toBe('3');
    await expect(reader.stepPage(runId, { cursor: 'x' })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(reader.stepPage(runId, { limit: 1001 })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });

  it('the messages API pages the history the same way', async () => {
    const first = await get(`/v1/runs/${runId}/messages`);
    expect(first.rawPayload.length).toBeLessThan(API_PAGE_BYTES);
    const body = json<Page<{ messages: Message[] }>>(first);
    expect(body).toMatchObject({ total: STEPS, nextCursor: String(READ_BOUNDS.apiItems) });
    expect(body.messages).toHaveLength(READ_BOUNDS.apiItems);
    const last = json<Page<{ messages: Message[] }>>(await get(`/v1/runs/${runId}/messages?cursor=19999`));
    expect(last).toEqual({
      messages: [{ role: 'assistant', content: 'answer 19999' }],
      nextCursor: null,
      total: STEPS,
    });
  });

  it('a page of large messages stops after about 4 MiB, whole messages only, and the next page goes on from there', async () => {
    const large = newRunId();
    // Four messages of 1.5 MB: two fit under the cap, the third would pass it.
    await commitLongRun(reader.store, { runId: large, tenant: 'acme', steps: 4, message: 'x'.repeat(1_500_000) });
    const first = json<Page<{ messages: Message[] }>>(await get(`/v1/runs/${large}/messages`));
    expect(first.messages.map((message) => String(message.content).slice(-2))).toEqual([' 0', ' 1']);
    expect(first.nextCursor).toBe('2');
    const second = json<Page<{ messages: Message[] }>>(await get(`/v1/runs/${large}/messages?cursor=2`));
    expect(second.messages.map((message) => String(message.content).slice(-2))).toEqual([' 2', ' 3']);
    expect(second.nextCursor).toBeNull();
    // The page cuts each message's text instead.
    const page = await get(`/runs/${large}`);
    expect(page.rawPayload.length).toBeLessThan(PAGE_BYTES);
    expect(page.body).toContain(`(${1_500_000 + 2 - READ_BOUNDS.pageTextChars} more characters)`);
  });
});

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from }, (_, index) => from + index);
}

/** The indexes of the steps a run page details. */
function shownSteps(html: string): number[] {
  return [...html.matchAll(/<details class="step-detail" data-index="(\d+)"/g)].map((match) => Number(match[1]));
}

/** The history positions of the messages a run page's transcript shows. */
function shownMessages(html: string): number[] {
  return [...html.matchAll(/<div class="msg msg-\w+" data-index="(\d+)"/g)].map((match) => Number(match[1]));
}

function linkOf(html: string, id: string): string {
  const href = new RegExp(`<a id="${id}" href="([^"]+)"`).exec(html)?.[1];
  expect(href, `a link #${id}`).toBeDefined();
  return href!.replaceAll('&amp;', '&');
}
