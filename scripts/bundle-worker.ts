import { build, type Plugin } from 'esbuild';
import { readFile } from 'node:fs/promises';
import { readdirSync, rmSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

/**
 * `npm run build`'s last step: `agentq worker` loads dist/worker/worker-entry.bundle.js (worker-command.ts),
 * one module made by esbuild of worker-entry.js and what it imports, agentq's and its dependencies', instead
 * of some 700 files each resolved, read and compiled on its own (`npm run bench:worker-start` measures the
 * start). What loads lazily still does: each dynamic import becomes a chunk of its own beside the bundle
 * (`worker-entry.chunk-*.js`), loaded only when reached.
 *
 * Two things keep the bundle's code behaving as the modules it was made of:
 *  - a module's `import.meta.url` (the Lua files beside it, a thread's module, `createRequire`) still names
 *    that module's own file under dist/, which is where `npm run build` put them;
 *  - packages that find files of their own at run time (native addons, model weights, pino's transport
 *    threads, OpenTelemetry's loader hooks) or that a worker loads only on demand stay outside, imported
 *    from node_modules as before.
 */
const root = join(dirname(new URL(import.meta.url).pathname), '..');
const dist = join(root, 'dist');

/** Packages left to node_modules (by name, or a scope followed by a slash). */
const EXTERNAL = [
  'better-sqlite3',
  'sqlite-vec',
  'msgpackr-extract',
  '@energetic-ai/',
  '@opentelemetry/',
  'import-in-the-middle',
  'bullmq-otel',
  'pino',
  'pino-pretty',
  'thread-stream',
  'sonic-boom',
  'unpdf',
  'linkedom',
  'undici',
  'mammoth',
  '@modelcontextprotocol/',
  '@qdrant/',
  'gpt-tokenizer',
  'fastify',
  '@fastify/',
  '@bull-board/',
];

/** A module's `import.meta.url` rewritten to name its own file, from a bundle written into `outdir`. */
function ownUrls(outdir: string): Plugin {
  return {
    name: 'own-import-meta-url',
    setup(builder) {
      builder.onLoad({ filter: /\.js$/ }, async (args) => {
        if (!args.path.startsWith(`${dist}/`)) return undefined;
        const source = await readFile(args.path, 'utf8');
        if (!source.includes('import.meta.url')) return { contents: source, loader: 'js' };
        // The bundle and its chunks sit in outdir: the module's own file, relative to it.
        const own = `new URL(${JSON.stringify(`./${relative(outdir, args.path)}`)}, import.meta.url).href`;
        return { contents: source.replaceAll('import.meta.url', own), loader: 'js' };
      });
    },
  };
}

/** Bundles dist/<folder>/<name>.js into <name>.bundle.js beside it (and, with `chunks`, its lazy chunks). */
async function bundle(folder: string, name: string, chunks: boolean): Promise<number> {
  const outdir = join(dist, folder);
  const ours = (file: string) => file.startsWith(`${name}.bundle.`) || file.startsWith(`${name}.chunk-`);
  for (const file of readdirSync(outdir)) if (ours(file)) rmSync(join(outdir, file));
  await build({
    entryPoints: [join(outdir, `${name}.js`)],
    outdir,
    entryNames: '[name].bundle',
    chunkNames: `${name}.chunk-[hash]`,
    bundle: true,
    splitting: chunks,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: EXTERNAL.flatMap((pkg) => (pkg.endsWith('/') ? [`${pkg}*`] : [pkg, `${pkg}/*`])),
    plugins: [ownUrls(outdir)],
    // CommonJS packages inside an ES module bundle call `require` for Node's own modules.
    banner: {
      js: "import { createRequire as __agentqRequire } from 'node:module';\nconst require = __agentqRequire(import.meta.url);",
    },
    logLevel: 'warning',
  });
  return readdirSync(outdir).filter(ours).length;
}

const started = performance.now();
const files = await bundle('worker', 'worker-entry', true);
// The liveness thread (its own isolate) loads ioredis too: bundled, it starts beating sooner.
await bundle('worker/runtime', 'liveness-beat', false);
console.log(
  `bundled the worker's start into dist/worker/worker-entry.bundle.js (${files} files) and the liveness thread in ${Math.round(performance.now() - started)} ms`,
);
