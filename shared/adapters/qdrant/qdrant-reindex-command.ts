import type { Command } from 'commander';
import type { Config } from '../../config/config.js';
import { AgentqError } from '../../contracts/errors.js';
import { redactCredentials } from '../../contracts/redact-credentials.js';

interface CommandIo {
  out(text: string): void;
  err(text: string): void;
}

/**
 * `agentq reindex [--collection <name>] [--tenant <tenant>]`: copies the embedded store
 * (`<AGENTQ_DATA_DIR>/vectors.sqlite`) into Qdrant (QDRANT_URL) — the move described in docs/operations/qdrant.md.
 * Prints `{collections, records, seconds}` on stdout, progress on stderr. Wire it in bin/agentq.ts with
 * `registerReindexCommand(program, io)`.
 */
export function registerReindexCommand(program: Command, io: CommandIo, readConfig?: () => Config): void {
  program
    .command('reindex')
    .description(
      'copy the embedded vector store (<AGENTQ_DATA_DIR>/vectors.sqlite) into Qdrant (QDRANT_URL): collections, texts, payloads and vectors, without re-embedding; prints a JSON summary',
    )
    .option('--collection <name>', 'only this collection (default: all)')
    .option('--tenant <tenant>', 'only this tenant (default: all)')
    .action(async (options: { collection?: string; tenant?: string }) => {
      // zod and the config schema load only when the command runs (CLI cold start).
      const config = readConfig ? readConfig() : (await import('../../config/config.js')).loadConfig();
      if (!config.qdrantUrl) {
        throw new AgentqError(
          'INVALID_INPUT',
          'reindex copies the embedded store into Qdrant: set QDRANT_URL (e.g. http://localhost:6333) and AGENTQ_DATA_DIR to the folder holding vectors.sqlite',
        );
      }
      // Loaded here: the Qdrant client and SQLite would slow every other command's start.
      const { createVectorStore, embeddedVectorStorePath } = await import('../create-vector-store.js');
      const { importEmbeddedStore } = await import('./qdrant-import-embedded.js');
      const started = Date.now();
      const target = createVectorStore(config);
      let reported = 0;
      try {
        const result = await importEmbeddedStore({
          sourcePath: embeddedVectorStorePath(config),
          target,
          ...(options.tenant === undefined ? {} : { tenant: options.tenant }),
          ...(options.collection === undefined ? {} : { collection: options.collection }),
          onProgress: (copied) => {
            if (copied - reported < 10_000) return; // a line per 10k records, not per batch
            reported = copied;
            io.err(`copied ${copied} records`);
          },
        });
        io.err(
          `copied ${result.records} records of ${result.collections} collections into Qdrant at ${redactCredentials(config.qdrantUrl)}`,
        );
        io.out(JSON.stringify({ ...result, seconds: Math.round((Date.now() - started) / 10) / 100 }));
      } finally {
        await target.close();
      }
    });
}
