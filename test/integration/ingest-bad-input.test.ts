import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IngestClient } from '../../producer/ingest/ingest-client.js';
import { makeLongFiling, makePasswordProtectedPdf, makeScannedPdf, tempDirectory } from '../helpers/ingest-fixtures.js';
import { startTestEnv, type TestEnv } from '../helpers/test-env.js';

/**
 * Issue 25's bad input, in one batch through the real ingest path: a scan with no text layer and a
 * password-protected PDF are refused, each with its own reason; a 300-page filing and documents in
 * other languages are indexed; nothing else in the batch is lost.
 */
describe('ingest: documents that cannot be read fail alone, with a reason; long and foreign ones are indexed', () => {
  const data = tempDirectory('agentq-bad-input-data-');
  const files = tempDirectory('agentq-bad-input-files-');
  let env: TestEnv;
  let ingest: IngestClient;

  beforeAll(async () => {
    env = await startTestEnv({ env: { AGENTQ_DATA_DIR: data.path } });
    ingest = new IngestClient({ config: env.config });
  });
  afterAll(async () => {
    await ingest.close();
    await env.close();
    data.remove();
    files.remove();
  });

  it('scan and protected PDF refused with what to do; the 300-page filing, French and Japanese text and the rest indexed', async () => {
    const documents: Record<string, string | Uint8Array> = {
      'scan.pdf': makeScannedPdf(),
      'protected.pdf': makePasswordProtectedPdf(),
      'acme-10q.pdf': makeLongFiling(300),
      'bibliotheque.md': '# La bibliothèque\n\nLa bibliothèque municipale ouvre le dimanche matin pour les lecteurs.\n',
      'tokyo.txt': '東京は日本の首都です。人口は約千四百万人です。\n',
      'narwhal.md': '# Narwhal\n\nThe narwhal has a long spiral tusk.\n',
    };
    for (const [name, content] of Object.entries(documents)) writeFileSync(join(files.path, name), content);
    const batch = await ingest.ingest([files.path], { collection: 'bad-input' });
    const progress = await ingest.wait(batch.batchId, { timeoutMs: 120_000 });
    expect(progress).toMatchObject({ total: 6, done: 4, failed: 2, finished: true });
    const byName = new Map(progress.documents.map((document) => [document.path.split('/').pop()!, document]));
    expect(byName.get('scan.pdf')).toMatchObject({ status: 'failed', error: { code: 'PARSE_ERROR', message: expect.stringMatching(/no text layer \(2 pages of images.*OCR/) } });
    expect(byName.get('protected.pdf')).toMatchObject({ status: 'failed', error: { code: 'PARSE_ERROR', message: expect.stringMatching(/protected by a password; remove the protection/) } });
    for (const name of ['acme-10q.pdf', 'bibliotheque.md', 'tokyo.txt', 'narwhal.md']) expect(byName.get(name), name).toMatchObject({ status: 'indexed' });

    const filing = (await ingest.listDocuments({ collection: 'bad-input' })).find((record) => record.path.endsWith('acme-10q.pdf'));
    expect(filing).toMatchObject({ title: 'Acme Widgets, Inc. — Form 10-Q — quarter ended March 31, 2022', status: 'indexed' });
    expect(filing!.chunkCount).toBeGreaterThan(1);
    const [last] = await ingest.search({ query: 'quetzal plant closed', collection: 'bad-input' });
    expect(last).toMatchObject({ page: 300, title: 'Acme Widgets, Inc. — Form 10-Q — quarter ended March 31, 2022' });
    expect(last!.text).toContain('the quetzal plant closed in June');
    // Running headers and page numbers are not indexed as text.
    expect(last!.text).not.toContain('Acme Widgets, Inc. | Form 10-Q');
    const [french] = await ingest.search({ query: 'bibliothèque municipale dimanche', collection: 'bad-input' });
    expect(french?.title).toBe('La bibliothèque');
    const [narwhal] = await ingest.search({ query: 'narwhal tusk', collection: 'bad-input' });
    expect(narwhal?.title).toBe('Narwhal');
  }, 180_000);
});
