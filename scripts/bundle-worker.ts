import { build, type BuildOptions, type Plugin } from 'esbuild';
import { readFile } from 'node:fs/promises';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

/**
 * `npm run build`'s last step: esbuild bundles of what users and `agentq worker` load, so a worker's start
 * loads a few files instead of several hundred modules, each resolved, read and compiled on its own
 * (`npm run bench:worker-start` measures the start). The unbundled modules stay in dist/: tests spawn them,
 * the types are theirs, and a module's `import.meta.url` still points at them (below).
 *
 *  - The package's doors (package.json "exports": `agentq`, `agentq/worker`, …), each `<module>.bundle.js`
 *    beside the module it is made of, in one build with code splitting: a module two doors share is in one
 *    chunk (dist/chunks/) both import, so a graph made by `defineGraph` from `agentq` is the same class
 *    `startWorker` from `agentq/worker` checks, and module-level state stays one. BullMQ and ioredis are
 *    inlined: importing a library worker's three doors took a third less CPU than with them imported from
 *    node_modules (423 against 610 ms, in turns; bench:worker-start shows it), and nothing of a user's meets
 *    them (no option takes a Redis client or a BullMQ object; agentq's own tracing hands BullMQ its
 *    telemetry), though an OpenTelemetry instrumentation of the user's ioredis no longer sees agentq's
 *    commands. Packages whose objects a user hands the library stay in node_modules (DOOR_EXTERNAL): an
 *    `OpenAI` client passed as `client` throws its own `APIError`, which openai-error.ts tells apart with
 *    `instanceof`; a graph's zod `input` schema; OpenTelemetry's API, with the user's tracer provider.
 *  - `agentq worker`'s start (worker-entry.js, loaded by worker-command.ts) on its own, with openai and zod
 *    inlined too: the command's process loads no user code, so nothing of a user's meets a package's copy
 *    there, and with them external its start took some 1.2 times as long.
 *  - The liveness thread (its own isolate, started by threadModuleUrl) with ioredis: it beats sooner.
 *
 * Each dynamic import stays lazy: a chunk of its own, loaded only when reached. dist/bundles.meta.json
 * names the modules each bundle file holds; the entry-point test reads it to tell what a door loaded.
 *
 * A bundled module's `import.meta.url` (the Lua files beside it, a thread's module, `createRequire`) still
 * names that module's own file under dist/, where `npm run build` put what it looks for.
 */
const root = join(dirname(new URL(import.meta.url).pathname), '..');
const dist = join(root, 'dist');
const CHUNKS = 'chunks';
const META = 'bundles.meta.json';

/**
 * Packages the bundles leave to node_modules (by name, or a scope followed by a slash): those that find
 * files of their own at run time (native addons, model weights, pino's transport threads, OpenTelemetry's
 * loader hooks) or that a worker loads only on demand.
 */
const CLI_EXTERNAL = [
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

/** What the doors leave to node_modules beside CLI_EXTERNAL: packages whose objects a user hands in. */
const DOOR_EXTERNAL = [...CLI_EXTERNAL, 'openai', 'zod', 'fastify-type-provider-zod'];

/** esbuild's `external` for packages named as above: each package and the files under it. */
function externals(packages: readonly string[]): string[] {
  return packages.flatMap((pkg) => (pkg.endsWith('/') ? [`${pkg}*`] : [pkg, `${pkg}/*`]));
}

/** Stands for the path from an output file back to dist/ until the build knows where each module landed. */
const DIST_MARK = '__agentq_dist__';

/**
 * A module's `import.meta.url` rewritten to name its own file under dist/. With code splitting a module
 * lands in an entry's file or a chunk, in different folders, so the path is marked here and filled in
 * per output file (`ownPaths`).
 */
const ownUrls: Plugin = {
  name: 'own-import-meta-url',
  setup(builder) {
    builder.onLoad({ filter: /\.js$/ }, async (args) => {
      if (!args.path.startsWith(`${dist}/`)) return undefined;
      const source = await readFile(args.path, 'utf8');
      if (!source.includes('import.meta.url')) return { contents: source, loader: 'js' };
      const own = `new URL(${JSON.stringify(`${DIST_MARK}/${relative(dist, args.path)}`)}, import.meta.url).href`;
      return { contents: source.replaceAll('import.meta.url', own), loader: 'js' };
    });
  },
};

/** The marked paths of an output file's modules, relative to where that file is. */
function ownPaths(file: string, text: string): string {
  const up = relative(dirname(file), dist) || '.';
  return text.replaceAll(`${DIST_MARK}/`, `${up}/`);
}

const shared: BuildOptions = {
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  plugins: [ownUrls],
  // Node's `require`, for an inlined CommonJS package's `require` of a built-in.
  banner: {
    js: "import { createRequire as __agentqRequire } from 'node:module';\nconst require = __agentqRequire(import.meta.url);",
  },
  write: false,
  logLevel: 'warning',
  absWorkingDir: root,
};

/** Writes a build's files, each module's own path filled in; returns the metafile's modules per file. */
async function emit(options: BuildOptions): Promise<Record<string, string[]>> {
  const result = await build({ ...shared, ...options, metafile: true });
  for (const file of result.outputFiles ?? []) {
    mkdirSync(dirname(file.path), { recursive: true });
    writeFileSync(file.path, ownPaths(file.path, file.text));
  }
  return Object.fromEntries(
    Object.entries(result.metafile.outputs)
      .filter(([file]) => file.endsWith('.js'))
      .map(([file, output]) => [file, Object.keys(output.inputs)]),
  );
}

/** The module each door's bundle is made of: `./dist/worker/index.bundle.js` from dist/worker/index.js. */
function doors(): string[] {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    exports: Record<string, string | { default: string }>;
  };
  return Object.values(manifest.exports).flatMap((target) =>
    typeof target === 'string' ? [] : [join(root, target.default.replace(/\.bundle\.js$/, '.js'))],
  );
}

/** Removes what an earlier build bundled: `.bundle.js` files and their maps, `agentq worker`'s chunks. */
function clean(folder: string): void {
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) clean(path);
    else if (/\.bundle\.js(\.map)?$|^worker-entry\.chunk-/.test(entry.name)) rmSync(path);
  }
}

const started = performance.now();
rmSync(join(dist, CHUNKS), { recursive: true, force: true });
clean(dist);
const doorEntries = doors();
const meta = await emit({
  entryPoints: doorEntries,
  outdir: dist,
  outbase: dist,
  entryNames: '[dir]/[name].bundle',
  chunkNames: `${CHUNKS}/[name]-[hash]`,
  splitting: true,
  external: externals(DOOR_EXTERNAL),
  // Composed with tsc's maps beside each module: under --enable-source-maps a user's stack trace names
  // agentq's TypeScript sources, as it did when the doors were those modules.
  sourcemap: 'linked',
  sourcesContent: false,
});
Object.assign(
  meta,
  await emit({
    entryPoints: [join(dist, 'worker/worker-entry.js')],
    outdir: join(dist, 'worker'),
    entryNames: '[name].bundle',
    chunkNames: 'worker-entry.chunk-[hash]',
    splitting: true,
    external: externals(CLI_EXTERNAL),
  }),
  // The liveness thread (its own isolate, started by threadModuleUrl) loads ioredis too: bundled with
  // it, it starts beating sooner.
  await emit({
    entryPoints: [join(dist, 'worker/runtime/liveness-beat.js')],
    outdir: join(dist, 'worker/runtime'),
    entryNames: '[name].bundle',
  }),
);
writeFileSync(join(dist, META), `${JSON.stringify(meta)}\n`);
console.log(
  `bundled the package's ${doorEntries.length} doors, agentq worker's start and the liveness thread into ${Object.keys(meta).length} files in ${Math.round(performance.now() - started)} ms`,
);
