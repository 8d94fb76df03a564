import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { IngestClient } from '../../producer/client/ingest-client.js';
import type { VectorStore } from '../../shared/ports/vector-store.js';
import { SqliteVectorStore } from '../../shared/adapters/sqlite/sqlite-vector-store.js';
import { embeddedVectorStorePath } from '../../shared/adapters/create-vector-store.js';
import {
  startScriptedOpenAIServer,
  type ScriptedOpenAIServer,
  type ScriptedOpenAIServerOptions,
} from '../fakes/scripted-openai-server.js';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import type { AnyGraph } from '../../shared/graph/graph.js';
import { tempDirectory } from './ingest-fixtures.js';
import { lateBound } from './late-bound.js';
import { startTestEnv, type TestEnv } from './test-env.js';

/** Small Markdown documents about Paris landmarks: one answers "who sketched the tower" and names a town another describes. */
export const RAG_DOCS: Record<string, string> = {
  'eiffel.md':
    "# Eiffel Tower\n\nThe Eiffel Tower is a wrought-iron lattice tower in Paris. It was built by the company of Gustave Eiffel and completed in 1889 for the World's Fair.\n",
  'koechlin.md':
    '# Maurice Koechlin\n\nMaurice Koechlin was a Swiss structural engineer. As chief engineer of the company of Gustave Eiffel, Koechlin drew the first sketch of the Eiffel Tower in 1884. He was born in Buhl.\n',
  'buhl.md': '# Buhl\n\nBuhl is a commune in the Haut-Rhin department in Grand Est, in north-eastern France.\n',
  'louvre.md':
    "# Louvre\n\nThe Louvre is the world's most-visited art museum. It stands on the Right Bank of the Seine in Paris.\n",
  'notre-dame.md':
    '# Notre-Dame de Paris\n\nNotre-Dame de Paris is a medieval Catholic cathedral on the Île de la Cité. Its spire collapsed in the fire of 2019.\n',
};

/** A document only another tenant has; its words would match the questions if tenancy leaked. */
export const FOREIGN_DOC = {
  'secret-tower.md':
    '# Secret tower\n\nThe secret tower plans of the Eiffel company were drawn by an engineer named Zebulon Quill.\n',
};

/** Writes `docs` under `directory/name` and returns that folder. */
export function writeDocs(directory: string, name: string, docs: Record<string, string>): string {
  const folder = join(directory, name);
  mkdirSync(folder, { recursive: true });
  for (const [file, text] of Object.entries(docs)) writeFileSync(join(folder, file), text);
  return folder;
}

/** Ingests a folder through the queue (a worker must be running) and waits until it is indexed. */
export async function ingestFolder(
  ingest: IngestClient,
  folder: string,
  options: { collection: string; tenant?: string },
): Promise<void> {
  const batch = await ingest.ingest([folder], options);
  const progress = await ingest.wait(batch.batchId, {
    timeoutMs: 60_000,
    ...(options.tenant ? { tenant: options.tenant } : {}),
  });
  if (progress.failed > 0)
    throw new Error(
      `ingest failed: ${JSON.stringify(progress.documents.filter((document) => document.status === 'failed'))}`,
    );
}

/** The embedded store of a data folder, as the worker's ingest writes it (hand it to rag-agent as services.vectorStore). */
export function embeddedStoreOf(dataDir: string): VectorStore {
  return new SqliteVectorStore({ path: embeddedVectorStorePath({ dataDir }) });
}

export interface RagTestEnv<E extends TestEnv> {
  env: E;
  /** The scripted model, when the environment has one. */
  server: ScriptedOpenAIServer | undefined;
  ingest: IngestClient;
  store: VectorStore;
  close(): Promise<void>;
}

/**
 * A worker (`startTestEnv`, or `startApiTestEnv` for the HTTP side) whose `rag-agent` searches the
 * embedded store under `dataDir`, an ingest client for that store, and — with `model` — the scripted
 * OpenAI-compatible server as its language model. `close()` stops all of them (not `dataDir`).
 */
export async function startRagTestEnv<E extends TestEnv>(
  start: (options: { env: Record<string, string>; services: { vectorStore: VectorStore } }) => Promise<E>,
  dataDir: string,
  { model, env = {} }: { model?: ScriptedOpenAIServerOptions; env?: Record<string, string> } = {},
): Promise<RagTestEnv<E>> {
  const server = model ? await startScriptedOpenAIServer(model) : undefined;
  const store = embeddedStoreOf(dataDir);
  const modelEnv: Record<string, string> = server
    ? { OPENAI_BASE_URL: server.url, OPENAI_API_KEY: 'test-key', LLM_MODEL: 'scripted-chat' }
    : {};
  const started = await start({
    env: { AGENTQ_DATA_DIR: dataDir, ...modelEnv, ...env },
    services: { vectorStore: store },
  });
  const ingest = new IngestClient({ config: started.config });
  return {
    env: started,
    server,
    ingest,
    store,
    async close() {
      await ingest.close();
      await started.close();
      await store.close();
      await server?.close();
    },
  };
}

/**
 * A rag test as most start it, in the enclosing describe block: a worker (with `graphs` beside the built-in
 * ones) searching a temporary data folder in which the Paris documents are ingested as collection `paris`,
 * with the scripted server as its model (reset before each test); all closed and removed afterwards.
 */
export function useParisRagEnv(
  prefix: string,
  {
    graphs = [],
    model = {},
    env = {},
  }: { graphs?: AnyGraph[]; model?: ScriptedOpenAIServerOptions; env?: Record<string, string> } = {},
) {
  const data = tempDirectory(prefix);
  let rag: RagTestEnv<TestEnv> | undefined;
  beforeAll(async () => {
    rag = await startRagTestEnv((options) => startTestEnv({ ...options, graphs }), data.path, { model, env });
    await ingestFolder(rag.ingest, writeDocs(data.path, 'paris', RAG_DOCS), { collection: 'paris' });
  });
  afterAll(async () => {
    await rag?.close();
    data.remove();
  });
  beforeEach(() => rag?.server?.reset());
  return {
    env: lateBound('the rag test env', () => rag?.env),
    server: lateBound('the scripted OpenAI server', () => rag?.server),
  };
}
