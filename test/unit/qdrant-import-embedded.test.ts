import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/config/config.js';
import { AgentqError } from '../../shared/contracts/errors.js';
import type { VectorRecord } from '../../shared/ports/vector-store.js';
import { embeddedVectorStorePath } from '../../shared/adapters/create-vector-store.js';
import { importEmbeddedStore } from '../../shared/adapters/qdrant/qdrant-import-embedded.js';
import { qdrantPointId } from '../../shared/adapters/qdrant/qdrant-point-id.js';
import { registerReindexCommand } from '../../shared/adapters/qdrant/qdrant-reindex-command.js';
import { SqliteVectorStore } from '../../shared/adapters/sqlite/sqlite-vector-store.js';
import { QdrantFakeServer } from '../fakes/qdrant-fake-server.js';

const directory = mkdtempSync(join(tmpdir(), 'agentq-reindex-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
let files = 0;
const newFile = () => join(directory, `store-${(files += 1)}.sqlite`);

const compass: VectorRecord[] = [
  { id: 'v1', text: 'north', context: 'Compass rose', vector: [1, 0, 0], payload: { docId: 'n', page: 1 } },
  { id: 'v2', text: 'north-east', vector: [0.7, 0.7, 0], payload: { docId: 'ne' } },
  { id: 'v3', text: 'east without a vector', payload: { docId: 'e' } },
];

/** An embedded store with two tenants, vectors, a record without one and an empty collection. */
async function sourceStore(path: string): Promise<void> {
  const source = new SqliteVectorStore({ path });
  await source.upsert('acme', 'compass', compass);
  await source.ensureCollection('acme', 'empty');
  await source.upsert(
    'beta',
    'notes',
    Array.from({ length: 7 }, (_, index) => ({ id: `n${index}`, text: `pangolin note ${index}` })),
  );
  await source.close();
}

describe('importEmbeddedStore', () => {
  it('copies every collection and record — text, context, payload, vectors — into another store', async () => {
    const sourcePath = newFile();
    await sourceStore(sourcePath);
    const target = new SqliteVectorStore({ path: newFile() });
    const progress: number[] = [];
    expect(
      await importEmbeddedStore({ sourcePath, target, batchSize: 2, onProgress: (copied) => progress.push(copied) }),
    ).toEqual({ collections: 3, records: 10 });
    expect(progress).toEqual([2, 3, 5, 7, 9, 10]);
    // The embedded store also counts the records without a vector (compass has one).
    expect(await target.listCollections('acme')).toEqual([
      { name: 'compass', count: 3, dimensions: 3, missingVectors: 1 },
      { name: 'empty', count: 0, dimensions: null, missingVectors: 0 },
    ]);
    expect(await target.count('beta', { collection: 'notes' })).toBe(7);
    expect((await target.query('acme', { vector: [0.9, 0.1, 0] })).map((hit) => hit.id)).toEqual(['v1', 'v2']);
    const [byContext] = await target.query('acme', { text: 'rose' });
    expect(byContext).toMatchObject({ id: 'v1', text: 'north', payload: { docId: 'n', page: 1 } });
    await target.close();
  });

  it('copies one tenant’s collection only, and says when there is no embedded store', async () => {
    const sourcePath = newFile();
    await sourceStore(sourcePath);
    const target = new SqliteVectorStore({ path: newFile() });
    expect(await importEmbeddedStore({ sourcePath, target, tenant: 'acme', collection: 'compass' })).toEqual({
      collections: 1,
      records: 3,
    });
    expect(await target.count('beta')).toBe(0);
    const error = await importEmbeddedStore({ sourcePath: join(directory, 'absent.sqlite'), target }).catch(
      (caught: unknown) => caught,
    );
    expect(AgentqError.isInstance(error) && error.code).toBe('NOT_FOUND');
    await target.close();
  });
});

describe('agentq reindex', () => {
  it('copies the embedded store under AGENTQ_DATA_DIR into the Qdrant at QDRANT_URL and prints a summary', async () => {
    const dataDir = mkdtempSync(join(directory, 'data-'));
    const server = await QdrantFakeServer.start();
    const config = loadConfig({ AGENTQ_DATA_DIR: dataDir, QDRANT_URL: server.url });
    await sourceStore(embeddedVectorStorePath(config));
    const out: string[] = [];
    const program = new Command().exitOverride();
    registerReindexCommand(program, { out: (text) => out.push(text), err: () => undefined }, () => config);
    await program.parseAsync(['node', 'agentq', 'reindex', '--tenant', 'acme']);
    expect(JSON.parse(out[0]!)).toMatchObject({ collections: 2, records: 3 });
    const written = server
      .requestsTo(/^\/collections\/agentq_chunks\/points$/, 'PUT')
      .flatMap((request) => (request.body as { points: { id: string; vector: Record<string, unknown> }[] }).points);
    expect(written.map((point) => point.id)).toEqual(
      ['v1', 'v2', 'v3'].map((id) => qdrantPointId(['acme', 'compass', id])),
    );
    expect(Object.keys(written[0]!.vector).sort()).toEqual(['bm25', 'dense-3']);
    expect(written[0]!.vector['dense-3']).toEqual([1, 0, 0]);
    await server.close();
  });

  it('refuses to run without QDRANT_URL', async () => {
    const program = new Command().exitOverride();
    registerReindexCommand(program, { out: () => undefined, err: () => undefined }, () =>
      loadConfig({ AGENTQ_DATA_DIR: directory }),
    );
    await expect(program.parseAsync(['node', 'agentq', 'reindex'])).rejects.toThrow(/set QDRANT_URL/);
  });
});
