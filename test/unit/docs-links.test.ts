import { existsSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { docPages, headingAnchors, markdownLinks, readDoc, repoRoot } from '../helpers/doc-pages.js';

describe('the links of README.md and docs/', () => {
  it('finds the pages', () => {
    expect(docPages()).toContain('README.md');
    expect(docPages().length).toBeGreaterThan(10);
  });

  it('every relative link names a file that exists, and every anchor a heading of its page', () => {
    const broken: string[] = [];
    for (const page of docPages()) {
      const markdown = readDoc(page);
      for (const { target, line } of markdownLinks(markdown)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: — not ours to check offline
        const [path = '', anchor] = target.split('#');
        const file = path === '' ? page : normalize(relative(repoRoot, join(repoRoot, dirname(page), path)));
        if (!existsSync(join(repoRoot, file))) {
          broken.push(`${page}:${line}: ${target} (no file ${file})`);
          continue;
        }
        if (anchor !== undefined && file.endsWith('.md') && !headingAnchors(readDoc(file)).has(anchor)) {
          broken.push(`${page}:${line}: ${target} (no heading with anchor #${anchor} in ${file})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });
});
