import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, startApiTestEnv, type ApiTestEnv } from '../helpers/api-test-env.js';
import { tempDirectory } from '../helpers/ingest-fixtures.js';
import { servedDocument } from '../helpers/openapi-document.js';

const run = promisify(execFile);

/**
 * A caller's program against the client generated from the served document, compiled with it under
 * `strict`: every call, argument and field it uses must be what the generated types say. Nothing of the
 * generated code is edited.
 */
const CALLER = `
import { client } from './client/client.gen.js';
import { enqueueRun, getIngestBatch, getRun, getRunSteps, uploadDocuments } from './client/sdk.gen.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function main(baseUrl: string, key: string) {
  client.setConfig({ baseUrl, auth: key });
  const enqueued = await enqueueRun({ body: { graph: 'chain', input: { steps: 2 } }, throwOnError: true });
  let record = enqueued.data;
  for (let attempt = 0; attempt < 300 && !['completed', 'failed', 'cancelled'].includes(record.status); attempt += 1) {
    await sleep(100);
    record = (await getRun({ path: { id: record.id }, throwOnError: true })).data;
  }
  const steps = (await getRunSteps({ path: { id: record.id }, throwOnError: true })).data.steps;
  const upload = await uploadDocuments({
    body: { file: [new File(['# Tower\\n\\nMaurice Koechlin drew the first sketch.\\n'], 'tower.md')], collection: 'generated' },
    throwOnError: true,
  });
  let batch = (await getIngestBatch({ path: { batchId: upload.data.batchId }, throwOnError: true })).data;
  for (let attempt = 0; attempt < 300 && !batch.finished; attempt += 1) {
    await sleep(100);
    batch = (await getIngestBatch({ path: { batchId: upload.data.batchId }, throwOnError: true })).data;
  }
  return {
    status: record.status,
    enqueuedStatus: enqueued.response.status,
    steps: steps.map((step) => step.node),
    uploadStatus: upload.response.status,
    batch,
  };
}
`;

/** A TypeScript client generated from the served document (@hey-api/openapi-ts), compiled and used as is. */
describe('a client generated from the OpenAPI document', () => {
  const data = tempDirectory('agentq-openapi-client-');
  let env: ApiTestEnv;
  let baseUrl: string;

  beforeAll(async () => {
    env = await startApiTestEnv({ env: { AGENTQ_DATA_DIR: join(data.path, 'data') } });
    await env.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(env.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await env.close();
    data.remove();
  });

  it('enqueues a run, waits for it, reads its steps and uploads a document (multipart) against the real API', async () => {
    const project = join(data.path, 'caller');
    const documentFile = join(data.path, 'openapi.json');
    writeFileSync(documentFile, JSON.stringify(await servedDocument(env.app)));
    const { createClient } = await import('@hey-api/openapi-ts');
    await createClient({
      input: documentFile,
      output: { path: join(project, 'client'), importFileExtension: '.js' },
      plugins: ['@hey-api/client-fetch', '@hey-api/typescript', '@hey-api/sdk'],
      logs: { level: 'silent' },
    });
    writeFileSync(join(project, 'caller.ts'), CALLER);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ type: 'module' }));
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2022', 'DOM', 'DOM.Iterable'],
          strict: true,
          types: [],
          outDir: 'out',
        },
        include: ['caller.ts', 'client/**/*.ts'],
      }),
    );
    // tsc of this repository; a type error in the generated client or in the caller fails here.
    const tsc = join(process.cwd(), 'node_modules', 'typescript', 'bin', 'tsc');
    await run(process.execPath, [tsc, '-p', join(project, 'tsconfig.json')]).catch((error: { stdout?: string }) => {
      throw new Error(`the generated client does not compile:\n${error.stdout ?? String(error)}`);
    });
    const caller = (await import(pathToFileURL(join(project, 'out', 'caller.js')).href)) as {
      main: (baseUrl: string, key: string) => Promise<Record<string, unknown>>;
    };
    const result = await caller.main(baseUrl, KEYS.acmeProducer);
    expect(result).toMatchObject({
      enqueuedStatus: 202,
      status: 'completed',
      uploadStatus: 202,
      batch: { finished: true, total: 1, collection: 'generated' },
    });
    expect(result.steps).toEqual(expect.arrayContaining(['step']));
  }, 120_000);
});
