import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { repoRoot } from './helpers/node-entry.js';

/**
 * Tests spawn workers and CLIs from dist/ (test/helpers/node-entry.ts), so dist/ must be the code under
 * test. `npm test` has just built it; a test file run alone after an edit has not: then this builds it
 * first (`npm run build`, about 20 s) rather than let a process run stale code.
 */
export function setup(): void {
  const stale = staleSource();
  if (stale === undefined) return;
  console.log(`dist/ is older than ${stale}: running npm run build before the tests`);
  const build = spawnSync('npm', ['run', 'build'], { cwd: repoRoot, stdio: 'inherit' });
  if (build.status !== 0) {
    throw new Error(`npm run build failed (exit ${build.status}): tests spawn processes from dist/ and need it built`);
  }
}

/** A source file of the build whose dist/ counterpart is missing or older, if any. */
function staleSource(): string | undefined {
  const sources = [
    'index.ts',
    ...['bin', 'shared', 'worker', 'producer', 'testing'].flatMap((folder) => filesUnder(folder)),
  ];
  for (const source of sources) {
    // The Lua scripts are copied beside the JavaScript as they are (scripts/copy-lua.ts).
    if (!/\.(tsx?|lua)$/.test(source) || source.endsWith('.d.ts')) continue;
    const built = join(repoRoot, 'dist', source.replace(/\.tsx?$/, '.js'));
    let builtAt: number;
    try {
      builtAt = statSync(built).mtimeMs;
    } catch {
      return source;
    }
    if (builtAt < statSync(join(repoRoot, source)).mtimeMs) return source;
  }
  return undefined;
}

function filesUnder(folder: string): string[] {
  return readdirSync(join(repoRoot, folder), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(repoRoot, join(entry.parentPath, entry.name)));
}
