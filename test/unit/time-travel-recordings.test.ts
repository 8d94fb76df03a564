import { describe, expect, it } from 'vitest';
import { AgentqError } from '../../shared/contracts/errors.js';
import type { StepRecord } from '../../shared/contracts/run-record.js';
import { planFork, type ForkSource } from '../../shared/store/forks/plan-fork.js';
import { diffRequests } from '../../shared/store/recordings/diff-requests.js';
import {
  addressesOf,
  canonicalJson,
  expandRequest,
  fingerprintRequest,
} from '../../shared/store/recordings/request-fingerprint.js';
import { parseMeta } from '../../shared/store/run-meta.js';
import { parseSince } from '../../shared/contracts/parse-since.js';

const system = { role: 'system', content: 'Be brief.' };
const user = { role: 'user', content: 'what is 6*7?' };

describe('request fingerprints (issue 39)', () => {
  it('equal requests print equally whatever their key order; callbacks and signals are not part of what was asked', () => {
    const a = fingerprintRequest({ messages: [system, user], maxTokens: 100, onTextDelta: () => undefined });
    const b = fingerprintRequest({
      maxTokens: 100,
      messages: [{ content: 'Be brief.', role: 'system' }, user],
      abortSignal: new AbortController().signal,
    });
    expect(a.fingerprint).toBe(b.fingerprint);
    expect(a.fingerprint).toHaveLength(32);
    expect(
      fingerprintRequest({ messages: [system, { ...user, content: 'what is 6*8?' }], maxTokens: 100 }).fingerprint,
    ).not.toBe(a.fingerprint);
    expect(canonicalJson({ b: 1, a: { d: 2, c: 3 } })).toBe('{"a":{"c":3,"d":2},"b":1}');
  });

  it('keeps each message and the tool list once, by address, and expands back to the request', () => {
    const tools = [{ name: 'calculator', description: 'math', parameters: { type: 'object' } }];
    const { compact, contents } = fingerprintRequest({ messages: [system, user, system], tools });
    expect(compact.messages).toEqual([
      expect.stringMatching(/^c:[0-9a-f]{16}$/),
      expect.any(String),
      (compact.messages as string[])[0],
    ]);
    expect(contents.size).toBe(3);
    expect(addressesOf(compact)).toHaveLength(4);
    expect(expandRequest(compact, contents)).toEqual({ messages: [system, user, system], tools });
  });
});

describe('request fingerprints stay what recordings made earlier hold', () => {
  // Printed by the implementation that copied each request through JSON first: a replay compares a
  // recorded fingerprint with one made now, so these must not change.
  it('a chat request, one with a tool list and a JSON schema, and a tool call whose arguments hold Dates', () => {
    const chat = fingerprintRequest({ messages: [system, user], maxTokens: 100, onTextDelta: () => undefined });
    expect(chat.fingerprint).toBe('b07f8344e790dbe9294549c3ac7f1f69');
    expect([...chat.contents.keys()]).toEqual(['c:46562a160d0ab16c', 'c:f610e08aa54c97ee']);
    const withTools = fingerprintRequest({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'hi' },
            { type: 'image_url', image_url: { url: 'https://x/y.png', detail: undefined } },
          ],
        },
      ],
      tools: [
        {
          name: 'calc',
          description: 'math',
          parameters: { type: 'object', properties: { b: { type: 'number' }, a: { type: 'string' } } },
        },
      ],
      temperature: 0.2,
      responseFormat: { type: 'json_schema', name: 'r', schema: { z: 1, a: [1, null, undefined] } },
    });
    expect(withTools.fingerprint).toBe('3bfcb070d2fd38596bc8d1dc9ee02348');
    expect(withTools.compact.responseFormat).toEqual({
      type: 'json_schema',
      name: 'r',
      schema: { z: 1, a: [1, null, undefined] },
    });
    const when = new Date('2026-11-30T00:00:00Z');
    const call = fingerprintRequest({
      tool: 'lookup',
      args: { at: when, list: [when, { nested: when }], n: -0, nan: NaN },
    });
    expect(call.fingerprint).toBe('4ada2188442ac5d75461f4cdf4ae3d46');
    expect(JSON.stringify(call.compact)).toBe(
      '{"tool":"lookup","args":{"at":"2026-11-30T00:00:00.000Z","list":["2026-11-30T00:00:00.000Z",{"nested":"2026-11-30T00:00:00.000Z"}],"n":0,"nan":null}}',
    );
    // A content seen before prints to the same address (kept by this process, not hashed again).
    expect(fingerprintRequest({ messages: [system, user], maxTokens: 100 }).fingerprint).toBe(chat.fingerprint);
  });
});

describe('diffRequests', () => {
  it('names each leaf that differs by its JSON path, with the two values; long strings are cut', () => {
    expect(
      diffRequests(
        { messages: [system, user], maxTokens: 100 },
        { messages: [{ ...system, content: 'Be verbose.' }, user, { role: 'assistant', content: 'x' }] },
      ),
    ).toEqual([
      { path: 'maxTokens', recorded: 100 },
      { path: 'messages[0].content', recorded: 'Be brief.', replayed: 'Be verbose.' },
      { path: 'messages[2]', replayed: { role: 'assistant', content: 'x' } },
    ]);
    const [long] = diffRequests({ text: 'a'.repeat(500) }, { text: 'b' }, { maxChars: 10 });
    expect(long!.recorded).toBe('aaaaaaaaaa…[490 more characters]');
    expect(diffRequests({ a: 1 }, { a: 1 })).toEqual([]);
  });
});

describe('parseSince', () => {
  it('takes a duration back from now or an ISO time, and refuses anything else naming what it takes', () => {
    expect(parseSince('1h', 10_000_000)).toBe(10_000_000 - 3_600_000);
    expect(parseSince('30m', 10_000_000)).toBe(10_000_000 - 1_800_000);
    expect(parseSince('2026-11-28T00:00:00Z')).toBe(Date.parse('2026-11-28T00:00:00Z'));
    expect(() => parseSince('yesterday')).toThrow(/neither a duration \(like 30m, 1h, 7d\) nor an ISO 8601 time/);
  });
});

/** A completed run a → b → (c ∥ d) → e, recorded: what planFork reads. */
function source(overrides: Record<string, string> = {}): ForkSource {
  const step = (index: number, superstep: number, task: number, node: string): StepRecord => ({
    index,
    superstep,
    task,
    node,
    attempts: 1,
    startedAt: '2026-11-28T00:00:00.000Z',
    endedAt: '2026-11-28T00:00:01.000Z',
  });
  return {
    meta: parseMeta({
      id: 'run_1',
      tenant: 'acme',
      status: 'completed',
      graph: 'g',
      superstep: '4',
      tasks: '[]',
      stepCount: '5',
      maxSteps: '100',
      record: 'full',
      createdAt: '1',
      updatedAt: '2',
      ...overrides,
    }),
    record: {
      bytes: '100',
      b0: '{"m":0,"t":[{"node":"a"}],"s":{"log":[],"n":0}}',
      b1: '{"m":1,"t":[{"node":"b"}],"s":{"log":["a"]}}',
      b2: '{"m":2,"t":[{"node":"c"},{"node":"d"}],"s":{"n":1}}',
      'w2.t1': '{"node":"d","update":{"log":"d"},"messages":[]}',
      'w2.t0': '{"node":"c","update":{"log":"c"},"messages":[]}',
      b3: '{"m":3,"t":[{"node":"e"}],"s":{"log":["a","d","c"]}}',
    },
    steps: [step(0, 0, 0, 'a'), step(1, 1, 0, 'b'), step(2, 2, 1, 'd'), step(3, 2, 0, 'c'), step(4, 3, 0, 'e')],
    messages: [
      '{"role":"user","content":"1"}',
      '{"role":"assistant","content":"2"}',
      '{"role":"assistant","content":"3"}',
    ],
  };
}

describe('planFork', () => {
  it('rebuilds the state, history and step log before the step from the boundaries; parallel siblings before it are inherited', () => {
    const plan = planFork(source(), 3);
    expect(plan).toMatchObject({
      superstep: 2,
      tasks: [{ node: 'c' }, { node: 'd' }],
      state: { log: '["a"]', n: '1' },
      messages: source().messages.slice(0, 2),
      writes: { '1': '{"node":"d","update":{"log":"d"},"messages":[]}' },
    });
    expect(plan.steps.map((step) => [step.node, step.inheritedFrom])).toEqual([
      ['a', 'run_1'],
      ['b', 'run_1'],
      ['d', 'run_1'],
    ]);
    expect(Object.keys(plan.record).sort()).toEqual(['b0', 'b1', 'b2', 'w2.t1']);
    expect(planFork(source(), 0)).toMatchObject({
      superstep: 0,
      state: { log: '[]', n: '0' },
      messages: [],
      steps: [],
    });
  });

  it('a patch replaces keys of the same kind; another key or kind is INVALID_INPUT naming set.<key>', () => {
    expect(planFork(source(), 1, { log: ['x'] }).state.log).toBe('["x"]');
    expect(() => planFork(source(), 1, { nope: 1 })).toThrow(
      /set\.nope: the state of run run_1 \(graph g\) has no key 'nope'; its keys are log, n/,
    );
    expect(() => planFork(source(), 1, { n: 'one' })).toThrow(
      /set\.n: state key 'n' holds a number, the patch gives string/,
    );
  });

  it('refuses a step past the end (NOT_FOUND), a running run (CONFLICT) and a run without a recording (RECORDING_UNAVAILABLE)', () => {
    const code = (action: () => unknown) => {
      try {
        action();
      } catch (error) {
        return AgentqError.isInstance(error) ? error.code : String(error);
      }
      return 'none';
    };
    expect(code(() => planFork(source(), 5))).toBe('NOT_FOUND');
    expect(code(() => planFork(source({ status: 'running' }), 1))).toBe('CONFLICT');
    expect(code(() => planFork({ ...source({ record: '' }), record: {} }, 1))).toBe('RECORDING_UNAVAILABLE');
    const over = source();
    delete over.record.b3;
    over.record.over = 'b3';
    expect(() => planFork(over, 4)).toThrow(/stopped at 'b3' when it reached AGENTQ_RECORDING_MAX_BYTES/);
    // A failed run may fork from the step that did not commit.
    expect(
      planFork(source({ status: 'failed', tasks: '[{"node":"e"}]', superstep: '3', stepCount: '4' }), 4).superstep,
    ).toBe(3);
  });
});
