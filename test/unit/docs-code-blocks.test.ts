import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { docPages, fencedBlocks, readDoc, repoRoot } from '../helpers/doc-pages.js';

/**
 * Docs that run: every fenced block a reader might copy says what it is, on the line before it.
 *
 * - `<!-- tested: test/…/x.test.ts -->` — that test runs the block (it reads it from this page by first
 *   line, through test/helpers/doc-pages.ts), so the test file must name the page;
 * - `<!-- illustrative -->` — an output sample, a diagram, or a command with placeholders: not run.
 *
 * Mermaid diagrams are pictures, not something to copy, and need no marker.
 */
describe('the code blocks of README.md and docs/', () => {
  it('are each run by a named test that reads their page, or marked illustrative', () => {
    const problems: string[] = [];
    for (const page of docPages()) {
      for (const block of fencedBlocks(readDoc(page))) {
        if (block.language === 'mermaid' || block.marker === 'illustrative') continue;
        const where = `${page}:${block.line} (\`\`\`${block.language})`;
        const tested = /^tested:\s*(.+)$/.exec(block.marker ?? '')?.[1];
        if (!tested) {
          problems.push(
            `${where}: no marker: run it in a test and put <!-- tested: test/…/x.test.ts --> before it, or <!-- illustrative -->`,
          );
          continue;
        }
        for (const testFile of tested.split(',').map((name) => name.trim())) {
          if (!existsSync(join(repoRoot, testFile))) problems.push(`${where}: ${testFile} does not exist`);
          else if (!readFileSync(join(repoRoot, testFile), 'utf8').includes(page))
            problems.push(`${where}: ${testFile} does not read ${page}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });
});
