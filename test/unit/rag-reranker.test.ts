import { describe, expect, it } from 'vitest';
import type { Reranker } from '../../shared/ports/reranker.js';
import { lexicalReranker, lexicalScores } from '../../worker/agents/rag/lexical-reranker.js';
import { rerankerOf, rerankPassages } from '../../worker/agents/rag/rerank-passages.js';
import type { RetrievedPassage } from '../../worker/agents/rag/retrieved-passage.js';
import { retrievedPassage } from '../helpers/retrieved-passages.js';

/** A passage whose store relevance is its search score. */
function passage(name: string, text: string, score: number): RetrievedPassage {
  return { ...retrievedPassage(name, text, score), relevance: score };
}

const signal = new AbortController().signal;

describe('the lexical reranker', () => {
  it('scores the question’s terms close together and its word pairs in order above the same words spread apart', () => {
    const [together, apart, none] = lexicalScores('Who drew the first sketch of the Eiffel Tower?', [
      { title: 'Koechlin', text: 'Koechlin drew the first sketch of the Eiffel Tower in 1884.' },
      {
        title: 'Paris',
        text: 'The tower stands in Paris. Many artists drew the city, and a first exhibition opened there. Eiffel built bridges; one sketch hangs in a museum far from it.',
      },
      { title: 'Buhl', text: 'Buhl is a commune in the Haut-Rhin department.' },
    ]);
    expect(together).toBeGreaterThan(apart!);
    expect(apart).toBeGreaterThan(none!);
    expect(none).toBe(0);
    expect(together).toBeLessThanOrEqual(1);
  });

  it('gives 0 to every candidate of a question without content words, and nothing for no candidates', async () => {
    expect(lexicalScores('Who is it?', [{ title: 'a', text: 'b' }])).toEqual([0]);
    expect(await lexicalReranker.score('tower', [], { abortSignal: signal })).toEqual([]);
  });
});

describe('rerankPassages', () => {
  const first = passage('paris', 'The tower stands in Paris.', 1);
  const second = passage('koechlin', 'Koechlin drew the first sketch of the Eiffel Tower.', 0.9);
  const third = passage('buhl', 'Buhl is a commune.', 0.5);

  it('orders the best hits by the mean of search and rerank scores; hits past topN count as scored 0', async () => {
    const fixed: Reranker = {
      name: 'fixed',
      score: (_query, candidates) => Promise.resolve(candidates.map((_c, i) => [0.2, 0.8][i] ?? 1)),
    };
    const reranked = await rerankPassages(fixed, 'q', [first, second, third], { topN: 2, abortSignal: signal });
    expect(reranked.map((entry) => [entry.title, entry.score])).toEqual([
      ['koechlin', (0.9 + 1) / 2],
      ['paris', (1 + 0.25) / 2],
      ['buhl', 0.5 / 2],
    ]);
    // What sources say (the store's relevance) is not the reranker's.
    expect(reranked.map((entry) => entry.relevance)).toEqual([0.9, 1, 0.5]);
  });

  it('with the built-in reranker, the passage that holds the question together moves first', async () => {
    const reranked = await rerankPassages(
      lexicalReranker,
      'Who drew the first sketch of the Eiffel Tower?',
      [first, second, third],
      {
        abortSignal: signal,
      },
    );
    expect(reranked[0]!.title).toBe('koechlin');
  });

  it('is chosen by AGENTQ_RAG_RERANKER: none is off; lexical is services.reranker, else the built-in one', () => {
    const custom: Reranker = { name: 'custom', score: () => Promise.resolve([]) };
    expect(rerankerOf({ services: { agentSettings: { ragReranker: 'none' }, reranker: custom } })).toBeUndefined();
    expect(rerankerOf({ services: { agentSettings: { ragReranker: 'lexical' } } })).toBe(lexicalReranker);
    expect(rerankerOf({ services: { agentSettings: { ragReranker: 'lexical' }, reranker: custom } })).toBe(custom);
  });
});
