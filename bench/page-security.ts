/**
 * `npx tsx bench/page-security.ts`: what the pages' security costs per request, on this machine.
 *  - headers: fastify answering a tiny route through app.inject, without and with the security headers
 *    (helmet with the pages' CSP, registerSecurityHeaders), in µs per request;
 *  - render: the run page of a large run (200 steps, 400 messages) rendered by Preact (the
 *    windows of them it shows: the latest 50 of each), in ms per page.
 * Progress on stderr, `name=value` lines on stdout. Not a test: no figure here is asserted.
 */
import Fastify from 'fastify';
import { performance } from 'node:perf_hooks';
import { runPage, type RunPageData } from '../producer/api/inspector/run-page.js';
import { READ_BOUNDS } from '../producer/api/read-bounds.js';
import type { ListWindow } from '../shared/store/run-reads.js';
import { registerSecurityHeaders } from '../producer/api/security-headers.js';
import { parseMeta, toRunRecord } from '../shared/store/run-meta.js';
import type { Message, RunEvent, StepRecord } from '../shared/contracts/run-record.js';

const REQUESTS = 20_000;
const PAGES = 50;

async function perRequestMicros(withHeaders: boolean): Promise<number> {
  const app = Fastify();
  if (withHeaders) registerSecurityHeaders(app);
  app.get('/x', async () => ({ ok: true }));
  await app.ready();
  for (let index = 0; index < 2000; index += 1) await app.inject({ method: 'GET', url: '/x' });
  const started = performance.now();
  for (let index = 0; index < REQUESTS; index += 1) await app.inject({ method: 'GET', url: '/x' });
  const micros = ((performance.now() - started) * 1000) / REQUESTS;
  await app.close();
  return micros;
}

function latest<T>(list: T[], size: number): ListWindow<T> {
  return { items: list.slice(-size), from: Math.max(0, list.length - size), total: list.length, next: null };
}

function largeRun(): RunPageData {
  const meta = parseMeta({
    id: 'run_bench',
    tenant: 'acme',
    status: 'completed',
    graph: 'react-agent',
    maxSteps: '1000',
    createdAt: '1700000000000',
    updatedAt: '1700000100000',
  });
  const steps: StepRecord[] = Array.from({ length: 200 }, (_, index) => ({
    index,
    superstep: index,
    task: 0,
    node: index % 2 === 0 ? 'model' : 'tool',
    attempts: 1,
    startedAt: new Date(1700000000000 + index * 400).toISOString(),
    endedAt: new Date(1700000000000 + index * 400 + 300).toISOString(),
    usage: { inputTokens: 900, outputTokens: 120, costUsd: 0.001, model: 'gpt' },
  })) as unknown as StepRecord[];
  const events: RunEvent[] = steps.flatMap((step, index) => [
    {
      id: `${1700000000000 + index * 400}-0`,
      type: 'step-start',
      data: { superstep: index, task: 0, node: step.node, attempt: 1 },
    },
    {
      id: `${1700000000000 + index * 400 + 300}-0`,
      type: 'step-end',
      data: { superstep: index, task: 0, node: step.node },
    },
  ]) as unknown as RunEvent[];
  const messages: Message[] = Array.from({ length: 400 }, (_, index) => ({
    role: index % 2 === 0 ? 'assistant' : 'tool',
    content: `message ${index} <b>with</b> "markup" & text `.repeat(20),
    ...(index % 2 === 1 ? { tool_call_id: `call_${index}` } : {}),
  })) as Message[];
  return {
    record: toRunRecord(meta),
    meta,
    // The windows the page route reads: the latest of each list.
    steps: latest(steps, READ_BOUNDS.pageSteps),
    events,
    messages: latest(messages, READ_BOUNDS.pageMessages),
    state: { messages: messages.slice(0, 50) },
    otherPaths: [],
    now: 1700000200000,
  };
}

const without = await perRequestMicros(false);
const withHeaders = await perRequestMicros(true);
console.error(`headers: ${REQUESTS} injects each way`);
const data = largeRun();
runPage(data);
const started = performance.now();
let bytes = 0;
for (let index = 0; index < PAGES; index += 1) bytes = runPage(data).length;
const renderMs = (performance.now() - started) / PAGES;
console.log(`inject_us_without_headers=${without.toFixed(1)}`);
console.log(`inject_us_with_headers=${withHeaders.toFixed(1)}`);
console.log(`headers_cost_us=${(withHeaders - without).toFixed(1)}`);
console.log(`run_page_render_ms=${renderMs.toFixed(1)}`);
console.log(`run_page_bytes=${bytes}`);
