import { h } from 'preact';
import { render } from 'preact-render-to-string';
import { describe, expect, it } from 'vitest';
import { ParkedStepNotice } from '../../producer/api/inspector/parked-step-notice.js';
import type { RunEvent } from '../../shared/contracts/run-record.js';

const parked = (waitingOn: Record<string, unknown>): RunEvent[] => [
  { id: '1700000000000-0', type: 'step-start', data: { node: 'wait', superstep: 1, task: 0 } },
  {
    id: '1700000000100-0',
    type: 'step-parked',
    data: { node: 'wait', superstep: 1, task: 0, parkedMs: 5000, waitingOn },
  },
];

/** The run inspector says what a step parked by context.sleep, waitFor or callback waits for, and until when. */
describe('the parked step notice of durable waits', () => {
  it('a sleeping step: until when', () => {
    const html = render(h(ParkedStepNotice, { events: parked({ sleep: { until: '2026-12-01T09:00:00.000Z' } }) }));
    expect(html).toContain('Step s1.t0 (wait) is sleeping');
    expect(html).toContain('until 2026-12-01T09:00:00.000Z');
  });

  it('a step waiting for an event: its name, its key and its timeout', () => {
    const html = render(
      h(ParkedStepNotice, {
        events: parked({ event: { name: 'payment', key: 'order-42', match: {}, until: '2026-12-02T00:00:00.000Z' } }),
      }),
    );
    expect(html).toContain('waiting for the event');
    expect(html).toContain('<code>payment</code>');
    expect(html).toContain('<code>order-42</code>');
    expect(html).toContain('until 2026-12-02T00:00:00.000Z, then it times out');
    const forever = render(
      h(ParkedStepNotice, { events: parked({ event: { name: 'payment', key: null, until: null } }) }),
    );
    expect(forever).toContain('with no timeout');
  });

  it('a step waiting for a callback URL: until when it works', () => {
    const html = render(h(ParkedStepNotice, { events: parked({ callback: { until: '2026-12-03T00:00:00.000Z' } }) }));
    expect(html).toContain('Step s1.t0 (wait) waits for a callback');
    expect(html).toContain('until 2026-12-03T00:00:00.000Z (then it times out)');
    expect(html).not.toContain('provider batch');
  });
});
