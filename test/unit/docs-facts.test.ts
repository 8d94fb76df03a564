import { describe, expect, it } from 'vitest';
import { MIN_KEY_LENGTH } from '../../producer/api/auth/api-keys.js';
import { EVENT_TYPES } from '../../shared/contracts/run-record.js';
import { docSection, readDoc } from '../helpers/doc-pages.js';

/** Facts a new user needs from the docs, checked against the code that defines them, on the page that holds each. */
describe('the docs tell a new user', () => {
  it('every event type a run can emit (docs/concepts/runs-and-steps.md)', () => {
    const events = docSection('docs/concepts/runs-and-steps.md', 'Events');
    const eventsParagraph = /The events are ([\s\S]*?)\n\n/.exec(events)?.[1] ?? '';
    for (const type of EVENT_TYPES) expect(eventsParagraph, `event ${type}`).toContain(`\`${type}\``);
  });

  it('the minimum length of an API key (docs/operations/deploying.md)', () => {
    expect(readDoc('docs/operations/deploying.md')).toContain(`at least ${MIN_KEY_LENGTH} characters`);
  });

  it('what POST /v1/runs answers for a graph no live worker serves (docs/reference/http-api.md)', () => {
    expect(readDoc('docs/reference/http-api.md')).toMatch(
      /a graph no live worker serves → 400 `UNKNOWN_GRAPH`.*`\?queueUnserved=true`/,
    );
  });
});
