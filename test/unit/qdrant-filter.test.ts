import { describe, expect, it } from 'vitest';
import { recordFilterConditions } from '../../shared/adapters/qdrant/qdrant-filter.js';
import { qdrantPointId, uuidV5 } from '../../shared/adapters/qdrant/qdrant-point-id.js';

describe('qdrantPointId', () => {
  it('is an RFC 4122 version-5 UUID (checked on the RFC’s DNS example)', () => {
    expect(uuidV5('6ba7b810-9dad-11d1-80b4-00c04fd430c8', 'www.example.com')).toBe(
      '2ed6657d-e927-568b-95e1-2665a8aea6a2',
    );
    expect(qdrantPointId(['acme', 'docs', 'doc_1.c0'])).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
  });

  it('is the same for the same record and differs across tenants and collections', () => {
    const id = qdrantPointId(['acme', 'docs', 'a']);
    expect(qdrantPointId(['acme', 'docs', 'a'])).toBe(id);
    expect(qdrantPointId(['other', 'docs', 'a'])).not.toBe(id);
    expect(qdrantPointId(['acme', 'notes', 'a'])).not.toBe(id);
    expect(qdrantPointId(['acme', 'docsa', ''])).not.toBe(qdrantPointId(['acme', 'docs', 'a']));
  });
});

describe('recordFilterConditions (port filter → Qdrant conditions on payload.*)', () => {
  it('equality: match for strings, booleans and integers, a closed range for other numbers', () => {
    expect(recordFilterConditions({ docId: 'd1', public: true, page: 2, ratio: 0.5 })).toEqual([
      { key: 'payload.docId', match: { value: 'd1' } },
      { key: 'payload.public', match: { value: true } },
      { key: 'payload.page', match: { value: 2 } },
      { key: 'payload.ratio', range: { gte: 0.5, lte: 0.5 } },
    ]);
  });

  it('in: match.any when the values share a type Qdrant indexes, else should', () => {
    expect(recordFilterConditions({ docId: { in: ['d2', 'd3'] } })).toEqual([
      { key: 'payload.docId', match: { any: ['d2', 'd3'] } },
    ]);
    expect(recordFilterConditions({ page: { in: [1, 2] } })).toEqual([{ key: 'payload.page', match: { any: [1, 2] } }]);
    expect(recordFilterConditions({ flag: { in: [true, 'yes'] } })).toEqual([
      {
        should: [
          { key: 'payload.flag', match: { value: true } },
          { key: 'payload.flag', match: { value: 'yes' } },
        ],
      },
    ]);
  });

  it('notIn: none of the values, and the field must be present (a missing field matches nothing)', () => {
    expect(recordFilterConditions({ lang: { notIn: ['fr'] } })).toEqual([
      { must_not: [{ is_empty: { key: 'payload.lang' } }, { key: 'payload.lang', match: { value: 'fr' } }] },
    ]);
  });

  it('an empty in-list can match nothing: no request needs to be sent', () => {
    expect(recordFilterConditions({ docId: { in: [] }, page: 1 })).toBe('never');
    expect(recordFilterConditions(undefined)).toEqual([]);
  });
});
