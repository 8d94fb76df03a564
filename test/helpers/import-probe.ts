import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { repoRoot } from './node-entry.js';

/**
 * What importing a part of the package costs a fresh Node process: the package imports itself by name
 * (`agentq`, `agentq/worker`), so the specifiers resolve through package.json "exports" to dist/ exactly
 * as they do for a user. The child records every module it loads: ES modules through a `load` hook
 * (registered before the import; it runs on the loader thread and appends each URL to a file), and
 * CommonJS modules from the require cache, which is where a CommonJS package's own requires go (they do
 * not pass the ESM hooks on Node 20). Timing runs leave the hook out, since it slows every load.
 *
 * A door's specifier names an esbuild bundle (`dist/index.bundle.js` and the chunks it imports,
 * scripts/bundle-worker.ts): what the child loaded is those files, and what they hold, the modules and
 * packages bundled into each, is read from the build's dist/bundles.meta.json.
 */

/** One import in a fresh process: `import { names } from specifier` for each entry (all names when empty). */
export interface ImportProbe {
  imports: { specifier: string; names: readonly string[] }[];
  /** Record the modules loaded (slower); without it only the time is measured. */
  recordModules?: boolean;
  /** The checkout whose package is imported (its built dist/); this one by default. */
  root?: string;
}

export interface ImportProbeResult {
  /** Milliseconds from the first import's start to the last one's end, in the child. */
  ms: number;
  /** Absolute paths of the files loaded (ES and CommonJS modules), sorted; empty without recordModules. */
  files: string[];
  /**
   * The modules those files are made of, sorted: a bundle file stands for the modules bundled into it (by
   * their path under the root), any other file for itself. Empty without recordModules.
   */
  modules: string[];
  /** For each specifier, the names it exports. */
  exported: Record<string, string[]>;
}

const HOOK = `
import { appendFileSync } from 'node:fs';
let out;
export function initialize(data) { out = data.out; }
export async function load(url, context, next) {
  appendFileSync(out, url + '\\n');
  return next(url, context);
}`;

function childScript(probe: ImportProbe, out: string): string {
  const register = probe.recordModules
    ? `const { register } = await import('node:module');
       register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(HOOK)}), { data: { out: ${JSON.stringify(out)} } });`
    : '';
  const imports = probe.imports
    .map(({ specifier, names }) => {
      const s = JSON.stringify(specifier);
      const pick = names.length === 0 ? 'm' : `Object.fromEntries(${JSON.stringify(names)}.map((n) => [n, m[n]]))`;
      return `{ const m = await import(${s}); exported[${s}] = Object.keys(m); picked.push(${pick}); }`;
    })
    .join('\n');
  return `${register}
    const exported = {};
    const picked = [];
    const started = performance.now();
    ${imports}
    const ms = performance.now() - started;
    const { createRequire } = await import('node:module');
    const commonJs = Object.keys(createRequire(import.meta.url).cache);
    process.stdout.write(JSON.stringify({ ms, commonJs, exported }));`;
}

/** Runs the probe in a child process started in the repository root and returns what it loaded. */
export async function probeImport(probe: ImportProbe): Promise<ImportProbeResult> {
  const scratch = mkdtempSync(join(tmpdir(), 'agentq-import-probe-'));
  const out = join(scratch, 'loaded.txt');
  try {
    const stdout = await runNode(['--input-type=module', '-e', childScript(probe, out)], probe.root ?? repoRoot);
    const result = JSON.parse(stdout) as { ms: number; commonJs: string[]; exported: Record<string, string[]> };
    const files = new Set<string>();
    if (probe.recordModules) {
      for (const url of readFileSync(out, 'utf8').split('\n')) {
        if (url.startsWith('file:')) files.add(new URL(url).pathname);
      }
      for (const path of result.commonJs) files.add(pathToFileURL(path).pathname);
    }
    const root = probe.root ?? repoRoot;
    const bundled = bundleContents(root);
    const modules = new Set([...files].flatMap((file) => bundled.get(file) ?? [file]));
    return { ms: result.ms, files: [...files].sort(), modules: [...modules].sort(), exported: result.exported };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * Each bundle file of a built checkout (absolute path) and the modules bundled into it (absolute paths),
 * from the build's metafile; empty for a checkout built without one.
 */
function bundleContents(root: string): Map<string, string[]> {
  const meta = join(root, 'dist', 'bundles.meta.json');
  if (!existsSync(meta)) return new Map();
  const outputs = JSON.parse(readFileSync(meta, 'utf8')) as Record<string, string[]>;
  return new Map(
    Object.entries(outputs).map(([file, inputs]) => [join(root, file), inputs.map((input) => join(root, input))]),
  );
}

function runNode(args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(stdout);
      else reject(new Error(`node exited with ${code}: ${stderr.slice(-2000)}`));
    });
  });
}

/** The package (or `dist/…` for the project's own files) a loaded file belongs to. */
export function moduleOwner(path: string, root = repoRoot): string {
  const inModules = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(path);
  if (inModules) return inModules[1]!;
  const relative = path.startsWith(root) ? path.slice(root.length) : path;
  return relative.replace(/^\//, '');
}

/**
 * Each entry point in package.json "exports" (`agentq`, `agentq/worker`, …), the file it names (`file`,
 * from the root) and the source that file is built from: `./dist/worker/index.bundle.js` (a bundle of
 * dist/worker/index.js) comes from `worker/index.ts`.
 */
export function entryPoints(root = repoRoot): { specifier: string; source: string; file: string }[] {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    exports: Record<string, string | { default: string }>;
  };
  return Object.entries(manifest.exports).flatMap(([subpath, target]) =>
    typeof target === 'string'
      ? []
      : [
          {
            specifier: subpath === '.' ? 'agentq' : `agentq${subpath.slice(1)}`,
            source: target.default.replace(/^\.\/dist\//, '').replace(/(\.bundle)?\.js$/, '.ts'),
            file: target.default.replace(/^\.\//, ''),
          },
        ],
  );
}

/**
 * Type-checks `file` (absolute, inside the repository so `agentq` resolves to itself) as a user's strict
 * project would: no tsconfig of ours, its `import … from 'agentq…'` through package.json "exports" to
 * dist/'s declarations.
 */
export function compileAgainstPackage(file: string): SpawnSyncReturns<string> {
  return spawnSync(
    process.execPath,
    [
      'node_modules/typescript/bin/tsc',
      '--ignoreConfig',
      '--noEmit',
      '--strict',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--target',
      'es2023',
      '--skipLibCheck',
      file,
    ],
    { cwd: repoRoot, encoding: 'utf8' },
  );
}
