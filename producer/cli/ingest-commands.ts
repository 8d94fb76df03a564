import type { Command } from 'commander';
import { AgentqError } from '../../shared/contracts/errors.js';
import { UsageError } from './producer-commands.js';
import type { IngestProgress } from '../../shared/retrieval/ingest-batch.js';
import type { CollectionStatus } from '../../shared/retrieval/collection-status.js';
import type { IngestClient } from '../client/ingest-client.js';
import type { DocumentSearch } from '../client/document-search.js';
import { createProgressBar } from './progress-bar.js';

/** The CLI's output channels (stdout: results only; stderr: progress and diagnostics). */
interface CommandIo {
  out(text: string): void;
  err(text: string): void;
  setExitCode(code: number): void;
}

type IngestClientFactory = () => Promise<IngestClient>;
type SearchFactory = () => Promise<Pick<DocumentSearch, 'search' | 'close'>>;

async function defaultFactory(): Promise<IngestClient> {
  // Loaded when an ingest command runs: other commands do not pay for it.
  const { IngestClient } = await import('../client/ingest-client.js');
  return new IngestClient();
}

async function defaultSearchFactory(): Promise<DocumentSearch> {
  // Search needs neither Redis nor the queue: only the vector store (CLI cold start).
  const { DocumentSearch } = await import('../client/document-search.js');
  return new DocumentSearch();
}

async function withClient<C extends { close(): Promise<void> }, T>(
  factory: () => Promise<C>,
  action: (client: C) => Promise<T>,
): Promise<T> {
  const client = await factory();
  try {
    return await action(client);
  } catch (error) {
    // A path that does not exist, a bad collection name, an empty query: the caller's to fix (exit 2).
    if (AgentqError.isInstance(error) && error.code === 'INVALID_INPUT') throw new UsageError(error.message);
    throw error;
  } finally {
    await client.close();
  }
}

function parsePositive(name: string) {
  return (value: string): number => {
    const number = Number(value);
    if (!Number.isInteger(number) || number < 1)
      throw new UsageError(`${name} must be a positive integer, got '${value}'`);
    return number;
  };
}

/** The batch as `agentq ingest` prints it: counts, the collection's vectors, then one line of outcome per document. */
function summary(progress: IngestProgress, seconds: number, status: CollectionStatus | null) {
  const count = (status: string) => progress.documents.filter((document) => document.status === status).length;
  return {
    batchId: progress.batchId,
    tenant: progress.tenant,
    collection: progress.collection,
    total: progress.total,
    indexed: count('indexed'),
    unchanged: count('unchanged'),
    failed: progress.failed,
    chunks: progress.documents.reduce(
      (sum, document) => sum + (document.status === 'indexed' ? (document.chunks ?? 0) : 0),
      0,
    ),
    seconds: Math.round(seconds * 100) / 100,
    // The collection's (not only this batch's) chunks with and without their vector; null when lexical.
    vectors: status?.vectors ?? null,
    documents: progress.documents.map(({ item: _item, ...document }) => document),
  };
}

/**
 * `agentq ingest` and `agentq search`. Exit codes as everywhere: 0 ok, 1 the command failed (for
 * ingest: any document failed; the summary on stdout says which and why), 2 usage error.
 */
export function registerIngestCommands(
  program: Command,
  io: CommandIo,
  clientFactory: IngestClientFactory = defaultFactory,
  searchFactory: SearchFactory = defaultSearchFactory,
): void {
  program
    .command('ingest')
    .description(
      'index documents (PDF, DOCX, HTML, Markdown, text; directories are walked) for search; prints a JSON summary',
    )
    .argument('<paths...>', 'files or directories')
    .option('--collection <name>', 'collection to add them to', 'default')
    .option('--tenant <tenant>', 'tenant (default AGENTQ_TENANT)')
    .option('--no-wait', 'return once the documents are queued (prints the batch; follow it with its batchId)')
    .option('--timeout-ms <ms>', 'give up waiting after this long', parsePositive('--timeout-ms'))
    .option(
      '--wait-vectors',
      'also wait until every chunk of the collection has its vector (they are added in the background; documents are searchable before)',
    )
    .action(
      async (
        paths: string[],
        options: { collection: string; tenant?: string; wait: boolean; timeoutMs?: number; waitVectors?: boolean },
      ) => {
        await withClient(clientFactory, async (client) => {
          const started = Date.now();
          const batch = await client.ingest(paths, {
            collection: options.collection,
            ...(options.tenant ? { tenant: options.tenant } : {}),
          });
          io.err(
            `queued ${batch.documents.filter((document) => document.status === 'queued').length} of ${batch.total} documents (batch ${batch.batchId})`,
          );
          if (!options.wait) {
            io.out(JSON.stringify(batch));
            return;
          }
          const bar = createProgressBar(process.stderr, 'ingesting', 'docs');
          const progress = await client.wait(batch.batchId, {
            tenant: batch.tenant,
            ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
            onProgress: (current) => bar.update(current),
          });
          bar.finish();
          const seconds = (Date.now() - started) / 1000;
          const tenant = { tenant: batch.tenant };
          let status = await client.collection(batch.collection, tenant);
          const result = summary(progress, seconds, status);
          const pending = status?.vectors?.pending ?? 0;
          io.err(
            `indexed ${result.indexed}, unchanged ${result.unchanged}, failed ${result.failed} (${result.chunks} chunks) in ${result.seconds} s: searchable now` +
              (pending > 0
                ? `; vectors pending for ${pending} of ${status!.chunks} chunks of ${batch.collection}, added in the background (searches rank those by their words until then; --wait-vectors waits)`
                : ''),
          );
          if (options.waitVectors) {
            if (pending > 0) {
              const vectorsBar = createProgressBar(process.stderr, 'adding vectors', 'chunks');
              const before = status!.vectors!.added;
              status = await client.waitForVectors(batch.collection, {
                ...tenant,
                ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
                onProgress: ({ added, pending: left }) =>
                  vectorsBar.update({ done: added - before, failed: 0, total: added - before + left }),
              });
              vectorsBar.finish();
            }
            const vectorsSeconds = (Date.now() - started) / 1000 - seconds;
            if (pending > 0)
              io.err(
                `vectors added: ${status?.vectors?.added ?? 0} chunks have one, ${status?.vectors?.pending ?? 0} pending (${vectorsSeconds.toFixed(2)} s more)`,
              );
            // Seconds after the documents were searchable until every vector was in (0: none was pending).
            Object.assign(result, {
              vectors: status?.vectors ?? null,
              vectorsSeconds: Math.round(vectorsSeconds * 100) / 100,
            });
          }
          io.out(JSON.stringify(result));
          if (progress.failed > 0) io.setExitCode(1);
        });
      },
    );

  program
    .command('search')
    .description('search the ingested documents: best chunks first, with title, path, page and score')
    .argument('<query>', 'words or a question')
    .option('--collection <name>', 'only this collection (default: all of the tenant’s)')
    .option('-k, --k <n>', 'how many chunks', parsePositive('-k'), 5)
    .option('--tenant <tenant>', 'tenant (default AGENTQ_TENANT)')
    .option('--json', 'print the hits as a JSON array')
    .action(async (query: string, options: { collection?: string; k: number; tenant?: string; json?: boolean }) => {
      await withClient(searchFactory, async (client) => {
        const hits = await client.search({
          query,
          k: options.k,
          ...(options.collection ? { collection: options.collection } : {}),
          ...(options.tenant ? { tenant: options.tenant } : {}),
        });
        if (options.json) {
          io.out(JSON.stringify(hits));
          return;
        }
        if (hits.length === 0) io.err('no matching chunks');
        hits.forEach((hit, index) => {
          const where = `${hit.path}${hit.page === null ? '' : ` (page ${hit.page})`}`;
          const snippet = hit.text.length > 200 ? `${hit.text.slice(0, 200)}…` : hit.text;
          io.out(`${index + 1}. [${hit.score.toFixed(2)}] ${hit.title} — ${where}\n   ${snippet.replace(/\s+/g, ' ')}`);
        });
      });
    });
}
