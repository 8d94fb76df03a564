import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { MIN_KEY_LENGTH } from '../../producer/api/auth/api-keys.js';
import { EVENT_TYPES } from '../../shared/contracts/run-record.js';

const readme = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8');

/** Facts a new user needs from the README alone, checked against the code that defines them (#19). */
describe('the README tells a new user', () => {
  it('every event type a run can emit', () => {
    const eventsParagraph = /The events are ([\s\S]*?)\n\n/.exec(readme)?.[1] ?? '';
    for (const type of EVENT_TYPES) expect(eventsParagraph, `event ${type}`).toContain(`\`${type}\``);
  });

  it('the minimum length of an API key', () => {
    expect(readme).toContain(`at least ${MIN_KEY_LENGTH} characters`);
  });

  it('what POST /v1/runs answers for a graph no live worker serves', () => {
    expect(readme).toMatch(/a graph no live worker serves → 400 `UNKNOWN_GRAPH`.*`\?queueUnserved=true`/);
  });
});
