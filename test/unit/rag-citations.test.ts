import { describe, expect, it } from 'vitest';
import { citedDocIdsOf, predictionOf, docIdOfPath } from '../../bench/eval/eval-prediction.js';
import { ragInputSchema } from '../../shared/retrieval/rag-input.js';
import { checkCitations } from '../../worker/agents/rag/check-citations.js';
import { ragOutputOf } from '../../worker/agents/rag/rag-output-of.js';
import { parseRagToolCall } from '../../worker/agents/rag/rag-tools.js';
import { citationIdOf, mergePassages } from '../../worker/agents/rag/retrieved-passage.js';
import { retrievedPassage } from '../helpers/retrieved-passages.js';

const passage = retrievedPassage;

describe('citations', () => {
  const eiffel = passage('eiffel', 'The tower was designed by Gustave Eiffel.');
  const louvre = passage('louvre', 'The Louvre is a museum.', 0.5);

  it('keeps citations of retrieved passages; drops invented ones from the text and the list', () => {
    const checked = checkCitations(
      `Gustave Eiffel designed it [${eiffel.id}][deadbe]. It is in Paris [doc7, ${louvre.id.toUpperCase()}].`,
      [eiffel.id, '[ffffff]'],
      [eiffel, louvre],
    );
    expect(checked).toEqual({
      answer: `Gustave Eiffel designed it [${eiffel.id}]. It is in Paris [${louvre.id}].`,
      cited: [eiffel.id, louvre.id],
      dropped: ['deadbe', 'doc7', 'ffffff'],
    });
  });

  it('the output numbers sources in the answer when citations is on, strips markers when off, lists cited documents first', () => {
    const state = {
      query: 'Who designed the tower?',
      answer: `Gustave Eiffel designed it [${louvre.id}][${eiffel.id}]. Really [${eiffel.id}].`,
      cited: [louvre.id, eiffel.id],
      passages: [eiffel, louvre, passage('other', 'Nothing here.', 0.2)],
      searches: [{ tool: 'search' as const, query: 'tower', round: 1, found: 3, retrieval: 'lexical' as const }],
      reasoning: ['Calling search: {"query":"tower"}'],
      rounds: 1,
      modelName: 'extractive',
    };
    const numbered = ragOutputOf({ ...state, citations: true });
    expect(numbered.answer).toBe('Gustave Eiffel designed it [1][2]. Really [2].');
    expect(numbered.sources.map((source) => source.path)).toEqual(['docs/louvre.md', 'docs/eiffel.md']);
    expect(numbered.retrieved.map((document) => document.path)).toEqual([
      'docs/louvre.md',
      'docs/eiffel.md',
      'docs/other.md',
    ]);
    expect(numbered).toMatchObject({
      search_count: 1,
      iterations: 1,
      model: 'extractive',
      retrieval: 'lexical',
      reasoning_steps: state.reasoning,
    });
    for (const source of numbered.sources) expect(source.score).toBeGreaterThan(0);
    expect(Math.max(...numbered.retrieved.map((document) => document.score))).toBe(1);
    expect(ragOutputOf({ ...state, citations: false }).answer).toBe('Gustave Eiffel designed it. Really.');
  });

  it("sources 'all': every retrieved page once, best relevance first, cited ones marked; markers number into it", () => {
    const eiffelAgain = {
      ...passage('eiffel', 'Its second paragraph.', 0.3),
      chunkId: 'doc_eiffel.c1',
      id: citationIdOf('doc_eiffel.c1'),
    };
    const passages = [
      { ...eiffel, relevance: 0.6 },
      { ...eiffelAgain, relevance: 0.7 },
      { ...louvre, relevance: 0.9 },
      { ...passage('other', 'Nothing here.', 0.2), relevance: 0.4 },
    ];
    const state = {
      query: 'Who designed the tower?',
      answer: `Gustave Eiffel designed it [${eiffel.id}].`,
      cited: [eiffel.id],
      passages,
      searches: [{ tool: 'search' as const, query: 'tower', round: 1, found: 4, retrieval: 'lexical' as const }],
      reasoning: [],
      rounds: 1,
      modelName: 'extractive',
      citations: true,
    };
    const all = ragOutputOf({ ...state, sourcesMode: 'all' });
    expect(all.sources).toEqual([
      { title: 'louvre', path: 'docs/louvre.md', page: null, score: 0.9, cited: false },
      // Two passages of one page are one source, at the better relevance.
      { title: 'eiffel', path: 'docs/eiffel.md', page: null, score: 0.7, cited: true },
      { title: 'other', path: 'docs/other.md', page: null, score: 0.4, cited: false },
    ]);
    expect(all.answer).toBe('Gustave Eiffel designed it [2].');
    // retrieved still begins with the cited documents.
    expect(all.retrieved[0]!.path).toBe('docs/eiffel.md');
    const cited = ragOutputOf({ ...state, sourcesMode: 'cited' });
    expect(cited.sources).toEqual([{ title: 'eiffel', path: 'docs/eiffel.md', page: null, score: 0.6, cited: true }]);
    expect(cited.answer).toBe('Gustave Eiffel designed it [1].');
  });

  it('merging passages keeps first-seen order, the best score and the earliest round', () => {
    const again = { ...eiffel, score: 0.4, round: 2 };
    const better = { ...louvre, score: 0.9, round: 2 };
    expect(
      mergePassages([eiffel, louvre], [again, better, passage('new', 'x')]).map((entry) => [
        entry.title,
        entry.score,
        entry.round,
      ]),
    ).toEqual([
      ['eiffel', 1, 1],
      ['louvre', 0.9, 1],
      ['new', 1, 1],
    ]);
  });
});

describe('rag tool calls', () => {
  const call = (name: string, args: string) =>
    parseRagToolCall({ id: 'c1', type: 'function', function: { name, arguments: args } });
  it('reads search, refine_and_search (either argument name) and final_answer; anything else is an error for the model', () => {
    expect(call('search', '{"query":" tower "}')).toMatchObject({ kind: 'search', tool: 'search', query: 'tower' });
    expect(call('refine_and_search', '{"refined_query":"eiffel"}')).toMatchObject({
      kind: 'search',
      tool: 'refine_and_search',
      query: 'eiffel',
      arguments: '{"refined_query":"eiffel"}',
    });
    expect(call('refine_and_search', '{"query":"eiffel"}')).toMatchObject({ kind: 'search', query: 'eiffel' });
    expect(call('final_answer', '{"answer":"A","citations":["x",3]}')).toEqual({
      kind: 'final',
      callId: 'c1',
      answer: 'A',
      citations: ['x'],
    });
    expect(call('search', '{"query":""}')).toMatchObject({
      kind: 'invalid',
      error: expect.stringMatching(/needs a non-empty 'query'/),
    });
    expect(call('search', '{nope')).toMatchObject({
      kind: 'invalid',
      error: expect.stringMatching(/not a JSON object/),
    });
    expect(call('web', '{}')).toMatchObject({ kind: 'invalid', error: expect.stringMatching(/no tool named 'web'/) });
  });
});

describe('RAG input schema', () => {
  it('fills the defaults of DESIGN §4 and names the field that is wrong', () => {
    expect(ragInputSchema.parse({ query: ' Why? ' })).toEqual({
      query: 'Why?',
      collection: 'default',
      max_iterations: 3,
      citations: false,
    });
    const issues = (input: unknown) =>
      ragInputSchema.safeParse(input).error?.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    expect(issues({ query: 'x', max_iterations: 11 })).toEqual([
      'max_iterations: max_iterations must be an integer from 1 to 10',
    ]);
    expect(issues({ query: 'x', max_iterations: 1.5 })).toEqual([
      'max_iterations: max_iterations must be an integer from 1 to 10',
    ]);
    expect(issues({ query: '' })).toEqual(['query: query must not be empty']);
    expect(issues({ query: 'x', collection: 'a:b' })).toEqual([
      expect.stringMatching(/^collection: collection must be 1-128/),
    ]);
    expect(issues({ query: 'x', extra: 1 })).toEqual([expect.stringMatching(/extra/)]);
  });
});

describe('eval predictions', () => {
  it('doc ids are file names without extension; cited documents first, then the rest, each once', () => {
    expect(docIdOfPath('/data/set/docs/Warsaw__p012.md')).toBe('Warsaw__p012');
    const output = {
      answer: 'A',
      sources: [{ title: 'b', path: 'docs/B.md', page: null, score: 1, cited: true }],
      retrieved: [
        { title: 'a', path: 'docs/A.md', page: null, score: 1 },
        { title: 'b', path: 'docs/B.md', page: null, score: 1 },
      ],
    };
    expect(predictionOf('q1', output)).toEqual({ id: 'q1', answer: 'A', cited_doc_ids: ['B', 'A'] });
    expect(predictionOf('q2', null)).toEqual({ id: 'q2', answer: '', cited_doc_ids: [] });
    // sources: 'all' lists every page by relevance, cited or not: the cited ones come in citation order (retrieved's).
    const all = {
      answer: 'A',
      sources: [
        { title: 'a', path: 'docs/A.md', page: null, score: 0.9, cited: false },
        { title: 'c', path: 'docs/C.md', page: null, score: 0.8, cited: true },
        { title: 'b', path: 'docs/B.md', page: null, score: 0.7, cited: true },
      ],
      retrieved: [
        { title: 'b', path: 'docs/B.md', page: null, score: 0.7 },
        { title: 'c', path: 'docs/C.md', page: null, score: 0.8 },
        { title: 'a', path: 'docs/A.md', page: null, score: 0.9 },
      ],
    };
    expect(citedDocIdsOf(all)).toEqual(['B', 'C']);
    expect(predictionOf('q3', all).cited_doc_ids).toEqual(['B', 'C', 'A']);
  });
});
