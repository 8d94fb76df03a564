import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { strToU8, zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IngestClient } from '../../producer/client/ingest-client.js';
import { chunkId } from '../../shared/retrieval/chunk-records.js';
import { documentIdFor } from '../../shared/retrieval/document-record.js';
import { INGEST_QUEUE } from '../../shared/contracts/queues.js';
import { startTestEnv, type TestEnv } from '../helpers/test-env.js';
import {
  BOILERPLATE_HTML,
  DOCX_PARAGRAPHS,
  makeDocx,
  makeLongFiling,
  makePasswordProtectedPdf,
  makePdf,
  makeScannedPdf,
  MARKDOWN,
  PLAIN_TEXT,
  tempDirectory,
} from '../helpers/ingest-fixtures.js';

describe('document ingestion through the queue and a real worker', () => {
  const data = tempDirectory();
  const files = tempDirectory('agentq-ingest-files-');
  let env: TestEnv;
  let ingest: IngestClient;

  beforeAll(async () => {
    env = await startTestEnv({
      env: { AGENTQ_DATA_DIR: data.path, AGENTQ_CHUNK_TOKENS: '120', AGENTQ_CHUNK_OVERLAP_TOKENS: '20' },
    });
    ingest = new IngestClient({ config: env.config });
  });
  afterAll(async () => {
    await ingest.close();
    await env.close();
    data.remove();
    files.remove();
  });

  const write = (name: string, content: string | Uint8Array) => {
    const path = join(files.path, name);
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, content);
    return path;
  };

  it('indexes every format from a directory, type detected from content; chunks carry page and heading path', async () => {
    const directory = join(files.path, 'formats');
    write('formats/report.pdf', makePdf());
    write('formats/memo.docx', makeDocx(DOCX_PARAGRAPHS));
    write('formats/okapi.html', BOILERPLATE_HTML);
    write('formats/bees.md', MARKDOWN);
    write('formats/lichen.txt', PLAIN_TEXT);
    write(
      'formats/disguised.txt',
      makeDocx([{ style: 'Heading1', text: 'Hidden Word' }, { text: 'A Word file named like text, about capybaras.' }]),
    );
    const batch = await ingest.ingest([directory], { collection: 'formats' });
    expect(batch.total).toBe(6);
    expect(batch.documents.every((document) => document.status === 'queued')).toBe(true);

    const progress = await ingest.wait(batch.batchId, { timeoutMs: 60_000 });
    expect(progress).toMatchObject({ total: 6, done: 6, failed: 0, finished: true });
    expect(
      Object.fromEntries(progress.documents.map((document) => [document.path.split('/').pop(), document.type])),
    ).toEqual({
      'report.pdf': 'pdf',
      'memo.docx': 'docx',
      'okapi.html': 'html',
      'bees.md': 'markdown',
      'lichen.txt': 'text',
      'disguised.txt': 'docx',
    });

    const records = await ingest.listDocuments({ collection: 'formats' });
    expect(records).toHaveLength(6);
    for (const record of records)
      expect(record).toMatchObject({
        status: 'indexed',
        collection: 'formats',
        tenant: env.config.tenant,
        error: null,
      });
    expect(records.find((record) => record.path.endsWith('report.pdf'))).toMatchObject({
      title: 'Annual Report 2024',
      pages: 2,
      type: 'pdf',
    });

    const [zebra] = await ingest.search({ query: 'zebra crossing outlook', collection: 'formats', k: 1 });
    expect(zebra).toMatchObject({
      title: 'Annual Report 2024',
      page: 2,
      headingPath: ['Annual Report 2024', 'Outlook'],
    });
    expect(zebra!.path).toMatch(/report\.pdf$/);
    const [aardvark] = await ingest.search({ query: 'aardvark revenue', collection: 'formats', k: 1 });
    expect(aardvark).toMatchObject({ page: 1, headingPath: ['Annual Report 2024'] });
    const [wetland] = await ingest.search({ query: 'wetland corridor roads', collection: 'formats', k: 1 });
    expect(wetland).toMatchObject({ title: 'Field Memo', page: 2, headingPath: ['Recommendations'] });
    const [diet] = await ingest.search({ query: 'okapi fungi', collection: 'formats', k: 1 });
    expect(diet).toMatchObject({ title: 'Okapi Facts', headingPath: ['Okapi Facts', 'Diet'], page: null });
    expect(await ingest.search({ query: 'NAVWORD FOOTWORD SIDEWORD SCRIPTWORD', collection: 'formats' })).toEqual([]);
    const [honey] = await ingest.search({ query: 'honey cold', collection: 'formats', k: 1 });
    expect(honey).toMatchObject({ title: 'Beekeeping Notes', headingPath: ['Beekeeping Notes', 'Winter'] });
    expect((await ingest.search({ query: 'capybaras', collection: 'formats', k: 1 }))[0]?.headingPath).toEqual([
      'Hidden Word',
    ]);
    // A question naming the document finds it through its title even where the chunk text does not say it.
    expect(
      (await ingest.search({ query: 'Field Memo', collection: 'formats', k: 5 })).every(
        (hit) => hit.title === 'Field Memo',
      ),
    ).toBe(true);
  });

  it('keeps every chunk within the token budget, its text the slice its offsets name', async () => {
    const long = Array.from(
      { length: 80 },
      (_, index) => `Fact ${index}: the wombat burrow number ${index} is ${index * 3} metres deep.`,
    ).join(' ');
    const path = write('budget/wombats.md', `# Wombats\n\n${long}\n`);
    const batch = await ingest.ingest([path], { collection: 'budget' });
    await ingest.wait(batch.batchId);
    const hits = await ingest.search({ query: 'wombat burrow', collection: 'budget', k: 100 });
    expect(hits.length).toBeGreaterThan(5);
    const { countTokens } = await import('../../worker/ingest/count-tokens.js');
    for (const hit of hits) expect(countTokens(hit.text)).toBeLessThanOrEqual(120);
  });

  it('re-ingesting an unchanged document changes nothing; a changed one replaces its chunks', async () => {
    const path = write('versions/guide.md', '# Guide\n\nThe marmot whistles at dawn.\n');
    const first = await ingest.wait((await ingest.ingest([path], { collection: 'versions' })).batchId);
    expect(first.documents[0]).toMatchObject({ status: 'indexed', chunks: 1 });
    const [before] = await ingest.listDocuments({ collection: 'versions' });

    const jobsBefore = await env.queue(INGEST_QUEUE).getJobCounts();
    const again = await ingest.ingest([path], { collection: 'versions' });
    expect(again.documents[0]).toMatchObject({ status: 'unchanged', docId: before!.id });
    expect(await ingest.progress(again.batchId)).toMatchObject({ total: 1, done: 1, failed: 0, finished: true });
    expect(await env.queue(INGEST_QUEUE).getJobCounts()).toEqual(jobsBefore); // no job at all
    expect((await ingest.listDocuments({ collection: 'versions' }))[0]).toEqual(before);

    write('versions/guide.md', '# Guide\n\nThe ibex climbs the cliff.\n\n## More\n\nIbexes have long horns.\n');
    const changed = await ingest.wait((await ingest.ingest([path], { collection: 'versions' })).batchId);
    expect(changed.documents[0]).toMatchObject({ status: 'indexed', chunks: 2, docId: before!.id });
    expect(await ingest.search({ query: 'marmot whistles', collection: 'versions' })).toEqual([]);
    const hits = await ingest.search({ query: 'ibex horns', collection: 'versions', k: 10 });
    expect(hits.map((hit) => hit.chunkId).sort()).toEqual([chunkId(before!.id, 0), chunkId(before!.id, 1)]);
    const [after] = await ingest.listDocuments({ collection: 'versions' });
    expect(after).toMatchObject({ id: before!.id, chunkCount: 2, status: 'indexed' });
    expect(after!.contentHash).not.toBe(before!.contentHash);
  });

  it('a poison document fails alone, with its reason; the others are indexed', async () => {
    write('poison/empty.pdf', new Uint8Array(0));
    write(
      'poison/junk.bin',
      Uint8Array.from({ length: 20_000 }, (_, index) => (index * 7919 + 17) % 256),
    );
    write('poison/broken.pdf', '%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer nonsense');
    write('poison/archive.zip', zipSync({ 'notes.txt': strToU8('not a word document') }));
    write('poison/good-1.md', '# Good one\n\nThe narwhal has a long tusk.\n');
    write('poison/good-2.txt', 'Axolotls regrow their limbs.\n');
    const batch = await ingest.ingest([join(files.path, 'poison')], { collection: 'poison' });
    const progress = await ingest.wait(batch.batchId, { timeoutMs: 60_000 });
    expect(progress).toMatchObject({ total: 6, done: 2, failed: 4, finished: true });
    const outcome = Object.fromEntries(
      progress.documents.map((document) => [document.path.split('/').pop(), [document.status, document.error?.code]]),
    );
    expect(outcome).toEqual({
      'empty.pdf': ['failed', 'UNSUPPORTED_FORMAT'],
      'junk.bin': ['failed', 'UNSUPPORTED_FORMAT'],
      'broken.pdf': ['failed', 'PARSE_ERROR'],
      'archive.zip': ['failed', 'UNSUPPORTED_FORMAT'],
      'good-1.md': ['indexed', undefined],
      'good-2.txt': ['indexed', undefined],
    });
    const broken = progress.documents.find((document) => document.path.endsWith('broken.pdf'));
    expect(broken?.error?.message).toMatch(/PDF/);
    const records = await ingest.listDocuments({ collection: 'poison' });
    expect(records.find((record) => record.path.endsWith('empty.pdf'))).toMatchObject({
      status: 'failed',
      error: { code: 'UNSUPPORTED_FORMAT' },
      chunkCount: 0,
    });
    expect((await ingest.search({ query: 'narwhal axolotls', collection: 'poison' })).length).toBe(2);
  });

  // The bad input ingestion must survive, in one batch: refused with a reason each, or indexed; nothing else lost.
  it('a scan and a protected PDF are refused with what to do; a 300-page filing, French and Japanese text and the rest are indexed; the 300-page filing, French and Japanese text and the rest indexed', async () => {
    const documents: Record<string, string | Uint8Array> = {
      'scan.pdf': makeScannedPdf(),
      'protected.pdf': makePasswordProtectedPdf(),
      'acme-10q.pdf': makeLongFiling(300),
      'bibliotheque.md': '# La bibliothèque\n\nLa bibliothèque municipale ouvre le dimanche matin pour les lecteurs.\n',
      'tokyo.txt': '東京は日本の首都です。人口は約千四百万人です。\n',
      'narwhal.md': '# Narwhal\n\nThe narwhal has a long spiral tusk.\n',
    };
    for (const [name, content] of Object.entries(documents)) write(`bad-input/${name}`, content);
    const batch = await ingest.ingest([join(files.path, 'bad-input')], { collection: 'bad-input' });
    const progress = await ingest.wait(batch.batchId, { timeoutMs: 120_000 });
    expect(progress).toMatchObject({ total: 6, done: 4, failed: 2, finished: true });
    const byName = new Map(progress.documents.map((document) => [document.path.split('/').pop()!, document]));
    expect(byName.get('scan.pdf')).toMatchObject({
      status: 'failed',
      error: { code: 'PARSE_ERROR', message: expect.stringMatching(/no text layer \(2 pages of images.*OCR/) },
    });
    expect(byName.get('protected.pdf')).toMatchObject({
      status: 'failed',
      error: { code: 'PARSE_ERROR', message: expect.stringMatching(/protected by a password; remove the protection/) },
    });
    for (const name of ['acme-10q.pdf', 'bibliotheque.md', 'tokyo.txt', 'narwhal.md'])
      expect(byName.get(name), name).toMatchObject({ status: 'indexed' });

    const filing = (await ingest.listDocuments({ collection: 'bad-input' })).find((record) =>
      record.path.endsWith('acme-10q.pdf'),
    );
    expect(filing).toMatchObject({
      title: 'Acme Widgets, Inc. — Form 10-Q — quarter ended March 31, 2022',
      status: 'indexed',
    });
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

  it('two tenants never see each other’s documents or chunks, even under the same path and collection', async () => {
    const path = write('tenants/shared.md', '# Shared\n\nThe quokka smiles at tourists.\n');
    const alice = await ingest.wait((await ingest.ingest([path], { collection: 'common', tenant: 'alice' })).batchId, {
      tenant: 'alice',
    });
    write('tenants/bob.md', '# Bob\n\nThe quokka is Bob’s secret.\n');
    const bob = await ingest.wait(
      (await ingest.ingest([join(files.path, 'tenants/bob.md')], { collection: 'common', tenant: 'bob' })).batchId,
      { tenant: 'bob' },
    );
    const aliceDoc = alice.documents[0]!.docId!;
    expect(aliceDoc).toBe(documentIdFor('alice', 'common', path));

    expect((await ingest.search({ query: 'quokka', tenant: 'alice' })).map((hit) => hit.title)).toEqual(['Shared']);
    expect((await ingest.search({ query: 'quokka', tenant: 'bob' })).map((hit) => hit.title)).toEqual(['Bob']);
    expect((await ingest.listDocuments({ tenant: 'bob' })).map((record) => record.id)).toEqual([
      bob.documents[0]!.docId,
    ]);
    expect(await ingest.getDocument(aliceDoc, { tenant: 'bob' })).toBeNull();
    expect(await ingest.deleteDocument(aliceDoc, { tenant: 'bob' })).toBe(false);
    expect(await ingest.progress(alice.batchId, { tenant: 'bob' })).toBeNull();
    expect((await ingest.search({ query: 'quokka', tenant: 'alice' })).length).toBe(1);
  });

  it('deleting a document removes its record and its chunks', async () => {
    const path = write('delete/doomed.md', '# Doomed\n\nThe dodo did not survive.\n');
    const batch = await ingest.wait((await ingest.ingest([path], { collection: 'delete' })).batchId);
    const docId = batch.documents[0]!.docId!;
    expect((await ingest.search({ query: 'dodo', collection: 'delete' })).length).toBe(1);
    expect(await ingest.deleteDocument(docId)).toBe(true);
    expect(await ingest.getDocument(docId)).toBeNull();
    expect(await ingest.search({ query: 'dodo', collection: 'delete' })).toEqual([]);
    expect(await ingest.deleteDocument(docId)).toBe(false);
  });

  it('accepts uploaded bytes under a name, and refuses nonexistent paths before queueing anything', async () => {
    const batch = await ingest.ingest(
      [{ name: 'upload/hello.md', content: strToU8('# Upload\n\nThe tapir swims well.\n') }],
      { collection: 'uploads' },
    );
    expect((await ingest.wait(batch.batchId)).documents[0]).toMatchObject({
      status: 'indexed',
      path: 'upload/hello.md',
    });
    await expect(ingest.ingest([join(files.path, 'missing.md')], { collection: 'uploads' })).rejects.toThrow(
      /does not exist/,
    );
    await expect(ingest.ingest([join(files.path, 'formats')], { collection: 'bad name!' })).rejects.toThrow(
      /collection/,
    );
  });
});
