import { describe, expect, it } from 'vitest';
import * as agentq from '../../index.js';
import { readDoc } from '../helpers/doc-pages.js';

describe('docs/reference/library-api.md', () => {
  it('names every value the package exports', () => {
    const page = readDoc('docs/reference/library-api.md');
    const names = Object.keys(agentq);
    expect(names.length).toBeGreaterThan(40);
    expect(names.filter((name) => !page.includes(`\`${name}\``))).toEqual([]);
  });
});
