import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import type * as SqliteVec from 'sqlite-vec';

/** better-sqlite3 and sqlite-vec: their CommonJS entries, loaded when the first store opens. */
export interface SqliteModules {
  Database: typeof BetterSqlite3;
  sqliteVec: typeof SqliteVec;
}

let loaded: SqliteModules | undefined;

/**
 * Required (synchronously, so a store's constructor still opens its file and fails there) at the first
 * SQLite store, not when this module is imported: `agentq/worker` exports SqliteVectorStore, and a
 * worker or script that never opens one should not load the native addon and its extension at start
 * (`npm run bench:worker-start` counts a worker's start).
 */
export function sqliteModules(): SqliteModules {
  if (loaded) return loaded;
  const require = createRequire(import.meta.url);
  loaded = {
    Database: require('better-sqlite3') as typeof BetterSqlite3,
    sqliteVec: require('sqlite-vec') as typeof SqliteVec,
  };
  return loaded;
}
