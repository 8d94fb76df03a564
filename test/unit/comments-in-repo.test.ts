import { describe, expect, it } from 'vitest';
import {
  COMMENTED_TREES,
  commentedFiles,
  outsideReferences,
  outsideReferencesUnder,
} from '../helpers/comment-references.js';
import { repoRoot } from '../helpers/node-entry.js';

/**
 * A reader of the repository has its code and its docs/, nothing else: a comment says its why in place
 * or links a page under docs/, never a section of a design file or a tracker's issue by number.
 */
describe('comments a reader can follow', () => {
  it('no comment in the TypeScript sources cites the design file by section or an issue by number', () => {
    const found = outsideReferencesUnder(repoRoot).map(({ file, line, text }) => `${file}:${line}: ${text}`);
    expect(found, 'say the why in place, or link a page under docs/').toEqual([]);
  });

  it('reads every tree it guards', () => {
    const files = commentedFiles(repoRoot);
    expect(files).toContain('index.ts');
    expect(files).toContain('test/unit/comments-in-repo.test.ts');
    for (const tree of COMMENTED_TREES)
      expect(
        files.some((file) => file.startsWith(`${tree}/`)),
        tree,
      ).toBe(true);
  });

  it('finds each form in line and block comments, also broken over lines, and nothing outside comments', () => {
    const section = ['DESIGN', '§2'].join(' ');
    const source = [
      `// Fenced commit (${section}).`,
      `/** Forks (${'issue'} 39). */`,
      '/**',
      ` * The run store (DESIGN.md`,
      ` * §3) and ${'Issue'} #22's pages.`,
      ' */',
      `const title = 'replay (${'issue'} 39) and ${section}';`,
      `const lua = \`-- ${'issue'} 34\`;`,
      '// A step commits once; see docs/concepts/at-most-once.md.',
    ].join('\n');
    expect(outsideReferences('example.ts', source).map(({ line }) => line)).toEqual([1, 2, 3]);
  });
});
