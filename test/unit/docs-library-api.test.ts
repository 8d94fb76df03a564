import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { docSection, repoRoot } from '../helpers/doc-pages.js';
import { entryPoints } from '../helpers/import-probe.js';

const page = 'docs/reference/library-api.md';

describe(page, () => {
  it('has a section for each entry point that names every value it exports', async () => {
    const doors = entryPoints();
    expect(doors.map((door) => door.specifier)).toEqual(expect.arrayContaining(['agentq', 'agentq/worker']));
    for (const { specifier, source } of doors) {
      const section = docSection(page, `\`${specifier}\``);
      const names = Object.keys((await import(join(repoRoot, source))) as object);
      expect(names.length, specifier).toBeGreaterThan(0);
      expect(
        names.filter((name) => !section.includes(`\`${name}\``)),
        `${specifier} exports these, its section does not name them`,
      ).toEqual([]);
    }
  });
});
