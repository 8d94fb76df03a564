import { afterAll, describe, expect, it } from 'vitest';
import { toChunkRecords } from '../../shared/retrieval/chunk-records.js';
import { SqliteVectorStore } from '../../shared/adapters/sqlite/sqlite-vector-store.js';
import { companyNames, findNamedDocuments, mentions } from '../../worker/agents/rag/named-documents.js';
import { reportForPeriod } from '../../shared/retrieval/sec-filings/period-of-query.js';
import { searchPassages } from '../../worker/agents/rag/search-passages.js';
import type { NodeContext } from '../../shared/graph/node-context.js';

const tenant = 'acme';
const store = new SqliteVectorStore({ path: ':memory:' });
afterAll(() => store.close());

async function addDocument(docId: string, title: string, texts: string[], company?: string) {
  const chunks = texts.map((text, index) => ({
    index,
    text,
    page: 1,
    headingPath: [],
    charStart: 0,
    charEnd: text.length,
  }));
  await store.upsert(
    tenant,
    'filings',
    toChunkRecords(chunks, {
      docId,
      title,
      path: `${docId}.pdf`,
      type: 'pdf',
      contentHash: 'h',
      ...(company ? { metadata: { company } } : {}),
    }),
  );
}

await addDocument(
  'apple-q1',
  'Apple Inc. — Form 10-Q — quarter ended December 31, 2022',
  ['Cover page of the quarterly report.', 'Research and development expense grew because of headcount.'],
  'Apple Inc.',
);
await addDocument(
  'intel-q1',
  'Intel Corporation — Form 10-Q — quarter ended April 1, 2023',
  [
    'Cover page of the quarterly report.',
    'Research and development expense and operating expenses fell as research and development programs were cut.',
  ],
  'Intel Corporation',
);
await addDocument('okapi', 'Okapi', ['The okapi is a giraffid native to the Congo.']);
await addDocument('tell', 'Tell', ['Tell is a town in Switzerland.']);

const context = { tenant, services: {} } as unknown as NodeContext;

describe("questions that name an entity hit that entity's documents", () => {
  it('company names as questions write them: without the legal suffix or the domain', () => {
    expect(companyNames('Amazon.com, Inc.')).toEqual(['amazon.com', 'amazon']);
    expect(companyNames('Microsoft Corporation')).toEqual(['microsoft']);
    expect(mentions("What was Apple's R&D expense?", 'apple', { properNoun: false })).toBe(true);
    expect(mentions('Is pineapple a fruit?', 'apple', { properNoun: false })).toBe(false);
  });

  it('a title is a name only when the question writes it as a proper noun', async () => {
    const named = await findNamedDocuments(store, tenant, {
      query: 'Where does the Okapi live, and can you tell me?',
      collection: 'filings',
    });
    expect(named.map((document) => [document.docId, document.kind])).toEqual([['okapi', 'title']]);
  });

  it("a question naming a company searches only that company's filings and says so", async () => {
    const question = "How did Apple's research and development expense change?";
    const result = await searchPassages(context, store, { query: question, collection: 'filings', k: 5, round: 1 });
    expect(result.passages[0]!.docId).toBe('apple-q1');
    expect(result.scope).toMatch(/names "apple": searched only its document \("Apple Inc\. — Form 10-Q/);
    const unscoped = await searchPassages(context, store, {
      query: 'How did research and development expense change?',
      collection: 'filings',
      k: 5,
      round: 1,
    });
    expect(unscoped.scope).toBeNull();
    expect(unscoped.passages[0]!.docId).toBe('intel-q1');
  });
});

describe('a question naming a period picks that report', () => {
  const reports = [
    { docId: 'q3-2022', periodEnded: 'September 30, 2022' },
    { docId: 'q1-2023', periodEnded: 'April 1, 2023' },
    { docId: 'q2-2023', periodEnded: 'July 1, 2023' },
  ];
  it('by the calendar quarter its period ends in, or the latest for "most recent"', () => {
    expect(reportForPeriod('What was revenue in Q1 2023?', reports)?.report.docId).toBe('q1-2023');
    expect(reportForPeriod('In the second quarter of 2023, what changed?', reports)?.report.docId).toBe('q2-2023');
    expect(reportForPeriod('What did the most recent 10-Q report?', reports)?.report.docId).toBe('q2-2023');
    expect(reportForPeriod('What was revenue in Q4 2021?', reports)).toBeNull();
    expect(reportForPeriod('How did revenue change?', reports)).toBeNull();
  });
});
