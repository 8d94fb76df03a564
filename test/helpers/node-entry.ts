import {
  existsSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, posix, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type TypeScript from 'typescript';

/**
 * What a spawned Node process runs. Processes start from `dist/` (built by `npm test`'s pretest; the
 * global setup rebuilds it when a source is newer): plain JavaScript starts several times faster than
 * TypeScript through tsx, which matters on a loaded machine. A test's own entry file (a chaos worker,
 * a fake server) has no build of its own: it is transpiled (types dropped, no type check; tsc checks
 * them) into node_modules/.cache, beside links to dist/, so its imports of the package's code load the
 * same built files as the CLI does.
 */
export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
/** The folders (and index.ts) that tsconfig.build.json compiles into dist/. */
const BUILT = ['bin', 'shared', 'worker', 'producer'];
const cache = join(repoRoot, 'node_modules', '.cache', 'agentq-test-entries');
const transpiled = new Set<string>();

/** The `node` script argument (absolute) that runs the repository-relative TypeScript file `entry`. */
export function nodeEntry(entry: string): string {
  if (isBuilt(entry)) return builtFile(entry);
  linkBuiltFolders();
  transpileTree(entry);
  return join(cache, toJs(entry));
}

function isBuilt(path: string): boolean {
  return path === 'index.ts' || BUILT.some((folder) => path.startsWith(`${folder}/`));
}

function toJs(path: string): string {
  return path.replace(/\.tsx?$/, '.js');
}

function builtFile(source: string): string {
  const file = join(repoRoot, 'dist', toJs(source));
  if (!existsSync(file)) {
    throw new Error(`${relative(repoRoot, file)} is missing: run \`npm run build\` (tests spawn processes from dist/)`);
  }
  return file;
}

function linkBuiltFolders(): void {
  mkdirSync(cache, { recursive: true });
  for (const folder of BUILT) {
    const link = join(cache, folder);
    const target = join(repoRoot, 'dist', folder);
    // A node_modules copied from another work tree keeps links to that tree's dist/: its processes would
    // run the other tree's code. Such a link is replaced.
    if (existsSync(link) && readlinkSync(link) === target) continue;
    if (existsSync(link)) rmSync(link);
    try {
      symlinkSync(target, link, 'dir');
    } catch (error) {
      // Another test file's process made it first.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}

/** Transpiles `entry` and the test files it imports (once per process: sources may change between runs). */
function transpileTree(entry: string): void {
  if (transpiled.has(entry)) return;
  transpiled.add(entry);
  // Loaded only here: most test files spawn only the built CLI and need no compiler.
  const ts = createRequire(import.meta.url)('typescript') as typeof TypeScript;
  const source = readFileSync(join(repoRoot, entry), 'utf8');
  const { outputText } = ts.transpileModule(source, {
    fileName: entry,
    compilerOptions: {
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2023,
      jsx: ts.JsxEmit.ReactJSX,
      jsxImportSource: 'preact',
    },
  });
  const out = join(cache, toJs(entry));
  mkdirSync(dirname(out), { recursive: true });
  // Written whole, then renamed: a process of another test file may be reading the previous copy.
  const partial = `${out}.${process.pid}.tmp`;
  writeFileSync(partial, outputText);
  renameSync(partial, out);
  for (const match of source.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) {
    const imported = posix.normalize(posix.join(posix.dirname(entry), match[1]!));
    const asTs = [imported.replace(/\.js$/, '.ts'), imported.replace(/\.js$/, '.tsx')].find((path) =>
      existsSync(join(repoRoot, path)),
    );
    if (!asTs) continue;
    if (isBuilt(asTs)) builtFile(asTs);
    else transpileTree(asTs);
  }
}
