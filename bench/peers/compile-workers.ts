/**
 * The peers bench's worker scripts compiled ahead to plain JavaScript, so every system's worker starts
 * as plain Node: under tsx each import goes through its loader hooks, which costs agentq (hundreds of
 * modules) far more than a peer and would skew the start-up figures. Each bench/peers/workers/*.ts is
 * bundled by esbuild with its packages left as imports, into node_modules/.cache (so those imports
 * resolve from this checkout's node_modules, as they do from the source). agentq's worker bundles only
 * the bench's side (the graph, the IPC) and imports agentq itself from a checkout's dist/ at run time.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';

const root = fileURLToPath(new URL('../..', import.meta.url));
const OUT_DIR = join(root, 'node_modules/.cache/agentq-bench-peers');

/** The worker entry points (serve-peer.ts is a module they share, not a worker). */
export const PEER_WORKER_SCRIPTS = [
  'agentq-worker',
  'chain-worker',
  'dbos-worker',
  'langgraph-worker',
  'model-server',
  'restate-worker',
] as const;
export type PeerWorkerScript = (typeof PEER_WORKER_SCRIPTS)[number];

/**
 * Bundling gives every module the bundle's `import.meta.url`; the workers locate the peers' scratch
 * folder and agentq's dist/ relative to their own source file, so each keeps its own URL.
 */
const ownImportMetaUrl: Plugin = {
  name: 'own-import-meta-url',
  setup(on) {
    on.onLoad({ filter: /\.ts$/ }, async ({ path }) => ({
      contents: (await readFile(path, 'utf8')).replaceAll('import.meta.url', JSON.stringify(pathToFileURL(path).href)),
      loader: 'ts',
    }));
  },
};

/** Compiles every peer worker; → the absolute path of each one's .mjs (fork it with `tsx: false`). */
export async function compilePeerWorkers(): Promise<Record<PeerWorkerScript, string>> {
  await build({
    entryPoints: PEER_WORKER_SCRIPTS.map((name) => join(root, 'bench/peers/workers', `${name}.ts`)),
    outdir: OUT_DIR,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    plugins: [ownImportMetaUrl],
    logLevel: 'error',
  });
  return Object.fromEntries(PEER_WORKER_SCRIPTS.map((name) => [name, join(OUT_DIR, `${name}.mjs`)])) as Record<
    PeerWorkerScript,
    string
  >;
}
