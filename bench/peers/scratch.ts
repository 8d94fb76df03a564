/**
 * The peers' own scratch folder, `bench/.peers/` (ignored by git): a package.json of its own and
 * `npm install` there, so Restate, DBOS and LangGraph's Postgres checkpointer never enter agentq's
 * dependencies. Peer workers load them with `peerRequire`, resolved from that folder.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PEERS_DIR = fileURLToPath(new URL('../.peers/', import.meta.url));

/** Exact versions: the figures name them, and a re-run must measure the same peers. */
export const PEER_PACKAGES: Record<string, string> = {
  '@restatedev/restate-server': '1.7.12',
  '@restatedev/restate-sdk': '1.17.2',
  '@dbos-inc/dbos-sdk': '5.3.0',
  '@langchain/core': '1.3.5',
  '@langchain/langgraph': '1.7.3',
  '@langchain/langgraph-checkpoint-postgres': '1.0.5',
  pg: '8.23.1',
};

function installedVersion(name: string): string | undefined {
  const file = join(PEERS_DIR, 'node_modules', name, 'package.json');
  if (!existsSync(file)) return undefined;
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

/** Installs the peers unless every pinned version is already there; throws with npm's message when it cannot. */
export function installPeers(log: (line: string) => void): void {
  const missing = Object.entries(PEER_PACKAGES).filter(([name, version]) => installedVersion(name) !== version);
  if (missing.length === 0) return;
  mkdirSync(PEERS_DIR, { recursive: true });
  const manifest = { name: 'agentq-bench-peers', private: true, type: 'module', dependencies: PEER_PACKAGES };
  writeFileSync(join(PEERS_DIR, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  log(`peers: npm install in ${PEERS_DIR} (${missing.map(([name, version]) => `${name}@${version}`).join(', ')})`);
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: PEERS_DIR,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

const requireFromPeers = createRequire(join(PEERS_DIR, 'package.json'));

/** A peer package from the scratch folder (its CommonJS build), typed by the caller. */
export function peerRequire<T>(name: string): T {
  return requireFromPeers(name) as T;
}

/** The restate-server binary the npm package ships for this platform. */
export function restateServerBinary(): string {
  const platform = `@restatedev/restate-server-${process.platform}-${process.arch}`;
  return requireFromPeers.resolve(`${platform}/bin/restate-server`);
}
