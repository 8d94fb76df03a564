import { afterAll, describe, expect, it } from 'vitest';
import type { Embedder } from '../../shared/ports/embedder.js';
import { LocalEmbedder } from '../../shared/adapters/local-embedder/local-embedder.js';
import { DENSE_MATCH_MARGIN, denseSentenceMatch } from '../../worker/agents/rag/dense-sentence-match.js';
import { rankPassages } from '../../worker/agents/rag/rank-passages.js';
import { citationIdOf, type RetrievedPassage } from '../../worker/agents/rag/retrieved-passage.js';
import { fakeNodeContext } from '../../testing/fake-node-context.js';

function passage(title: string, text: string, score: number): RetrievedPassage {
  const chunkId = `doc_${title.replace(/\W+/g, '_')}.c0`;
  return {
    id: citationIdOf(chunkId),
    chunkId,
    docId: chunkId.slice(0, -3),
    title,
    path: `docs/${title}.md`,
    page: null,
    headingPath: [title],
    text,
    score,
    round: 1,
  };
}

/** An embedder that records what it is asked to embed, passing the texts to `inner`. */
function recording(inner: Embedder, inProcess: boolean): Embedder & { asked: string[][] } {
  const asked: string[][] = [];
  return {
    provider: inner.provider,
    modelId: inner.modelId,
    inProcess,
    asked,
    embed: (texts, options) => {
      asked.push([...texts]);
      return inner.embed(texts, options);
    },
  };
}

const question = 'What do beroids typically eat?';
const feeding = passage(
  'Beroida (paragraph 2)',
  'Beroids feed mainly on other ctenophores, swallowing them whole. Their mouths are wide.',
  1,
);
const habitat = passage(
  'Beroida (paragraph 1)',
  'The beroids are typically found in coastal waters. They lack tentacles.',
  0.8,
);
const rocket = passage('Saturn V', 'The Saturn V rocket was assembled in Florida.', 0.5);

describe('denseSentenceMatch (the real local model)', () => {
  const local = new LocalEmbedder();
  afterAll(() => local.close());

  it('scores the likeliest sentences of the best passages by meaning: the one about eating beats the one that repeats the words', async () => {
    const embedder = recording(local, true);
    const { context } = fakeNodeContext({ embedder } as never);
    const lexical = rankPassages(question, [habitat, feeding, rocket], { linkBonus: 0 });
    expect(lexical[0]!.title).toBe('Beroida (paragraph 1)');
    const match = await denseSentenceMatch(context, embedder, question, lexical);
    expect(Object.keys(match).sort()).toEqual([feeding.id, habitat.id, rocket.id].sort());
    // Sentence positions in each passage: both of the two-sentence passages, the rocket's one.
    expect(Object.keys(match[feeding.id]!)).toEqual(['0', '1']);
    expect(Object.keys(match[rocket.id]!)).toEqual(['0']);
    const best = (id: string) => Math.max(...Object.values(match[id]!));
    expect(best(feeding.id)).toBeGreaterThan(best(habitat.id) + 0.03);
    expect(best(rocket.id)).toBeLessThan(best(habitat.id));
    // At the default weight, the meaning closes the lexical gap; the sentence about eating is the one quoted.
    const ranked = rankPassages(question, [habitat, feeding, rocket], { linkBonus: 0, denseMatch: match });
    expect(ranked.map((entry) => entry.title)).toEqual(['Beroida (paragraph 2)', 'Beroida (paragraph 1)', 'Saturn V']);
    expect(ranked[0]!.bestSentence).toBe('Beroids feed mainly on other ctenophores, swallowing them whole.');
    // The question and each passage's two likeliest sentences (the rocket has one), embedded once.
    expect(embedder.asked).toHaveLength(1);
    expect(embedder.asked[0]![0]).toBe(question);
    expect(embedder.asked[0]).toHaveLength(1 + 2 + 2 + 1);

    // The same passages again (another question of a batch): only the question is embedded.
    await denseSentenceMatch(context, embedder, question, lexical);
    expect(embedder.asked[1]).toEqual([question]);
  });

  it('asks nothing when the lexical lead is wide, when the two best passages are of different documents and titles, or of an embedder outside the process', async () => {
    const embedder = recording(local, true);
    const { context } = fakeNodeContext({ embedder } as never);
    const lead = rankPassages(
      question,
      [passage('Clear winner', 'Beroids typically eat other ctenophores.', 1), { ...rocket, score: 0.1 }],
      { linkBonus: 0 },
    );
    expect(lead[0]!.score + lead[0]!.coverage - (lead[1]!.score + lead[1]!.coverage)).toBeGreaterThan(
      DENSE_MATCH_MARGIN,
    );
    expect(await denseSentenceMatch(context, embedder, question, lead)).toEqual({});
    expect(await denseSentenceMatch(context, embedder, question, lead.slice(0, 1))).toEqual({});
    expect(embedder.asked).toEqual([]);

    // Close, but from two documents of different titles: their names tell them apart.
    const apart = [{ ...habitat, docId: 'doc_habitat', title: 'Beroid habitats' }, feeding, rocket];
    expect(
      await denseSentenceMatch(context, embedder, question, rankPassages(question, apart, { linkBonus: 0 })),
    ).toEqual({});
    expect(embedder.asked).toEqual([]);

    const remote = recording(local, false);
    const close = rankPassages(question, [habitat, feeding], { linkBonus: 0 });
    expect(
      await denseSentenceMatch(fakeNodeContext({ embedder: remote } as never).context, remote, question, close),
    ).toEqual({});
    expect(remote.asked).toEqual([]);
  });
});

describe('rankPassages with a dense match', () => {
  it('adds the weighted match to the lexical relevance; weight 0 or no match leaves the lexical order', () => {
    const passages = [habitat, feeding, rocket];
    const lexical = rankPassages(question, passages, { linkBonus: 0 }).map((entry) => entry.title);
    expect(lexical).toEqual(['Beroida (paragraph 1)', 'Beroida (paragraph 2)', 'Saturn V']);
    const denseMatch = { [habitat.id]: { 0: 0.52 }, [feeding.id]: { 0: 0.6 }, [rocket.id]: { 0: 0.1 } };
    const gap = rankPassages(question, passages, { linkBonus: 0 }).map((entry) => entry.relevance);
    // A weight large enough to close the lexical gap moves the better meaning first; a small one does not.
    const closing = (gap[0]! - gap[1]!) / (0.6 - 0.52);
    expect(
      rankPassages(question, passages, { linkBonus: 0, denseMatch, denseWeight: closing * 1.1 }).map(
        (entry) => entry.title,
      ),
    ).toEqual(['Beroida (paragraph 2)', 'Beroida (paragraph 1)', 'Saturn V']);
    expect(
      rankPassages(question, passages, { linkBonus: 0, denseMatch, denseWeight: closing * 0.9 }).map(
        (entry) => entry.title,
      ),
    ).toEqual(lexical);
    expect(
      rankPassages(question, passages, { linkBonus: 0, denseMatch, denseWeight: 0 }).map((entry) => entry.title),
    ).toEqual(lexical);
  });

  it("picks each passage's sentence by coverage and meaning together: a sentence that means the question can beat the one that repeats its words", () => {
    const two = passage(
      'Beroida (paragraph 3)',
      'Beroids are typically eaten by nobody in coastal waters. Their diet is other comb jellies.',
      1,
    );
    const [lexical] = rankPassages(question, [two], { linkBonus: 0 });
    expect(lexical!.bestSentence).toBe('Beroids are typically eaten by nobody in coastal waters.');
    const [dense] = rankPassages(question, [two], { linkBonus: 0, denseMatch: { [two.id]: { 0: 0.1, 1: 0.9 } } });
    expect(dense!.bestSentence).toBe('Their diet is other comb jellies.');
    expect(dense!.coverage).toBeLessThan(lexical!.coverage);
    expect(dense!.relevance).toBeCloseTo(1 + dense!.coverage + 2 * 0.9, 9);
    // A negative similarity is no penalty: the sentence keeps its coverage.
    const [unlike] = rankPassages(question, [two], { linkBonus: 0, denseMatch: { [two.id]: { 0: -0.4, 1: -0.3 } } });
    expect(unlike).toMatchObject({
      bestSentence: lexical!.bestSentence,
      coverage: lexical!.coverage,
      relevance: lexical!.relevance,
    });
  });
});
