import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

// The ordered tables, from the ground up, as the lint rules read them (eslint.config.js is plain JavaScript).
const eslintConfig = pathToFileURL(resolve('eslint.config.js')).href;
const { floors } = (await import(eslintConfig)) as { floors: Record<string, string[]> };
const trees = Object.keys(floors);

/** The rows `| <floor> | \`<tree>/<room>/\` | … |` of docs/architecture.md, per tree, by floor. */
function floorsInArchitectureDoc(): Record<string, string[]> {
  const doc = readFileSync('docs/architecture.md', 'utf8');
  const rows = [...doc.matchAll(/^\| (\d+) \| `(\w+)\/([\w/-]+)\/` \|/gm)];
  const table: Record<string, { floor: number; room: string }[]> = {};
  for (const [, floor, tree, room] of rows) (table[tree!] ??= []).push({ floor: Number(floor), room: room! });
  return Object.fromEntries(
    Object.entries(table).map(([tree, list]) => [tree, list.sort((a, b) => a.floor - b.floor).map((r) => r.room)]),
  );
}

/** The folders of a tree, as paths under it (`store`, `store/forks`, …). */
function foldersOf(root: string, under = ''): string[] {
  return readdirSync(`${root}/${under}`, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => {
      const folder = under ? `${under}/${entry.name}` : entry.name;
      return [folder, ...foldersOf(root, folder)];
    });
}

describe('the floors of shared/ and worker/', () => {
  it('docs/architecture.md prints the table eslint.config.js holds', () => {
    expect(floorsInArchitectureDoc()).toEqual(floors);
  });

  it('puts every folder of each tree in a room', () => {
    for (const tree of trees) {
      const outside = foldersOf(tree).filter(
        (folder) => !floors[tree]!.some((room) => folder === room || folder.startsWith(`${room}/`)),
      );
      expect(outside, `${tree}/ folders in no room of the floors`).toEqual([]);
    }
  });

  it('lets a room import the rooms below it and refuses the rooms above, type imports included', async () => {
    const eslint = new ESLint({ cwd: process.cwd() });
    async function zoneErrors(filePath: string, code: string): Promise<string[]> {
      const [result] = await eslint.lintText(code, { filePath });
      return result!.messages.filter((m) => m.ruleId === 'import-x/no-restricted-paths').map((m) => m.message);
    }
    const up = "import type { Keys } from '../store/keys.js';\nexport type K = Keys;\n";
    const down = "import type { RunStatus } from '../contracts/run-record.js';\nexport type S = RunStatus;\n";
    expect(await zoneErrors('shared/graph/probe.ts', up)).toEqual([
      expect.stringContaining('shared/graph stands below'),
    ]);
    expect(await zoneErrors('shared/graph/probe.ts', down)).toEqual([]);
    // The optional SEC heuristics stand above the core of retrieval, which never imports them.
    const sec = "import { readSecCover } from './sec-filings/sec-cover.js';\nexport const read = readSecCover;\n";
    expect(await zoneErrors('shared/retrieval/probe.ts', sec)).toHaveLength(1);
    const core = "import { bm25Tokens } from '../bm25-tokens.js';\nexport const tokens = bm25Tokens;\n";
    expect(await zoneErrors('shared/retrieval/sec-filings/probe.ts', core)).toEqual([]);
    const engineUp = "export const load = () => import('../operations/reconciler.js');\n";
    expect(await zoneErrors('worker/engine/probe.ts', engineUp)).toHaveLength(1);
    const engineToAgents =
      "import { builtInGraphs } from '../agents/graphs/built-in-graphs.js';\nexport const g = builtInGraphs;\n";
    expect(await zoneErrors('worker/engine/probe.ts', engineToAgents)).toEqual([
      expect.stringContaining('the engine runs agents through the graph model and ports'),
    ]);
  }, 60_000);
});
