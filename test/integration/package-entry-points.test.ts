import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { docSnippet, repoRoot } from '../helpers/doc-pages.js';
import { compileAgainstPackage, entryPoints, moduleOwner, probeImport } from '../helpers/import-probe.js';
import { loadScaledMs } from '../helpers/load-scale.js';

/**
 * The package's doors as a user meets them: each specifier imported by name in a fresh Node process,
 * resolved through package.json "exports" to the built dist/'s bundles (the global setup builds it when a
 * source is newer). A producer's `import { AgentClient } from 'agentq'` must not load the worker, the HTTP
 * server or their heavy packages: that is what the separate doors are for. What a bundle file holds is
 * read from the build's metafile (import-probe.ts), so a chunk that brings worker code counts as worker code.
 */
const page = 'docs/reference/library-api.md';

/** Packages only a worker or the HTTP API needs; each costs a producer start-up time or a native module. */
const SERVER_ONLY = [
  'fastify',
  '@fastify/swagger',
  '@fastify/swagger-ui',
  '@fastify/multipart',
  '@bull-board/api',
  '@bull-board/fastify',
  '@modelcontextprotocol/sdk',
  'better-sqlite3',
  'sqlite-vec',
  'linkedom',
  'unpdf',
  'preact',
  'preact-render-to-string',
  '@energetic-ai/core',
  '@qdrant/js-client-rest',
  'openai',
  'ajv',
  '@opentelemetry/sdk-trace-base',
  '@opentelemetry/sdk-trace-node',
];

describe('the package entry points', { timeout: loadScaledMs(120_000) }, () => {
  it('dist/ is built for each entry point, and "exports" names its bundle', () => {
    for (const { source, file } of entryPoints()) {
      const built = join(repoRoot, 'dist', source.replace(/\.ts$/, '.js'));
      expect(existsSync(built), `${built} is missing: the test global setup runs npm run build`).toBe(true);
      expect(file).toBe(join('dist', source.replace(/\.ts$/, '.bundle.js')));
      expect(existsSync(join(repoRoot, file)), `${file} is missing: npm run build bundles it`).toBe(true);
    }
  });

  it('the doors share their modules: each of agentq’s modules is in one bundle file at most', () => {
    const doorFiles = new Set(entryPoints().map(({ file }) => file));
    const outputs = JSON.parse(readFileSync(join(repoRoot, 'dist', 'bundles.meta.json'), 'utf8')) as Record<
      string,
      string[]
    >;
    const holders = new Map<string, string[]>();
    for (const [file, inputs] of Object.entries(outputs)) {
      if (!doorFiles.has(file) && !file.startsWith('dist/chunks/')) continue;
      for (const input of inputs) holders.set(input, [...(holders.get(input) ?? []), file]);
    }
    // A class or module-level state in two files would be two of each: a graph defined with one door's
    // `defineGraph` would not be the one another door's `startWorker` knows.
    expect(holders.get('dist/shared/graph/define-graph.js')).toHaveLength(1);
    expect([...holders].filter(([, files]) => files.length > 1)).toEqual([]);
  });

  it("import { AgentClient } from 'agentq' loads no worker, HTTP server or server-only package", async () => {
    const { files, modules, exported } = await probeImport({
      imports: [{ specifier: 'agentq', names: ['AgentClient'] }],
      recordModules: true,
    });
    expect(exported.agentq).toContain('AgentClient');
    // From the bundle, not from the modules one by one.
    expect(files).toContain(join(repoRoot, 'dist/index.bundle.js'));
    expect(files).not.toContain(join(repoRoot, 'dist/producer/client/agent-client.js'));
    const owners = new Set(modules.map((path) => moduleOwner(path)));
    // The probe sees what it should: the client, its Redis and BullMQ.
    expect(owners).toContain('dist/producer/client/agent-client.js');
    expect(owners).toContain('bullmq');
    expect(owners).toContain('ioredis');
    expect(SERVER_ONLY.filter((name) => owners.has(name))).toEqual([]);
    const ownCode = [...owners].filter((owner) => owner.startsWith('dist/'));
    expect(ownCode.filter((file) => file.startsWith('dist/worker/') || file.startsWith('dist/producer/api/'))).toEqual(
      [],
    );
  });

  it('the whole package, every entry point at once, does load the server side (the probe can tell)', async () => {
    const { files, modules } = await probeImport({
      imports: entryPoints().map(({ specifier }) => ({ specifier, names: [] })),
      recordModules: true,
    });
    const owners = new Set(modules.map((path) => moduleOwner(path)));
    expect(['fastify', 'openai'].filter((name) => !owners.has(name))).toEqual([]);
    // The vector stores' clients load when a store is made (sqlite-modules.ts, qdrant-module.ts), not at import.
    expect(['better-sqlite3', 'sqlite-vec', '@qdrant/js-client-rest'].filter((name) => owners.has(name))).toEqual([]);
    // All of agentq's code from the bundles: no module of dist/ loaded on its own.
    const dist = join(repoRoot, 'dist');
    expect(
      files.filter(
        (file) => file.startsWith(`${dist}/`) && !/\.bundle\.js$|^chunks\//.test(file.slice(dist.length + 1)),
      ),
    ).toEqual([]);
  });

  it('each entry point resolves by name to its built source and exports the same values', async () => {
    const doors = entryPoints();
    expect(doors.map((door) => door.specifier).sort()).toEqual(
      expect.arrayContaining(['agentq', 'agentq/agents', 'agentq/api', 'agentq/worker']),
    );
    const { exported } = await probeImport({
      imports: doors.map(({ specifier }) => ({ specifier, names: [] })),
    });
    for (const { specifier, source } of doors) {
      const fromSource = Object.keys((await import(join(repoRoot, source))) as object).sort();
      expect(exported[specifier]?.sort(), specifier).toEqual(fromSource);
    }
    // Internals stay out of every door.
    const all = Object.values(exported).flat();
    for (const internal of ['BatchDispatcher', 'promptView', 'INTAKE_QUEUE', 'STEP_QUEUE', 'ParkSignal']) {
      expect(all, internal).not.toContain(internal);
    }
  });

  it(`${page}: the imports of each entry point compile against the package's types`, () => {
    const scratch = mkdtempSync(join(repoRoot, '.readme-snippets-'));
    try {
      const file = join(scratch, 'doors.ts');
      writeFileSync(file, docSnippet(page, 'ts', '// One import per entry point.'));
      const compile = compileAgainstPackage(file);
      expect(compile.status, compile.stdout + compile.stderr).toBe(0);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});
