import { describe, expect, it } from 'vitest';
import { extractAnswer } from '../../worker/agents/rag/extract-answer.js';
import { planExtractiveRound, refineQuery, WEAK_COVERAGE } from '../../worker/agents/rag/plan-extractive-round.js';
import { rankPassages } from '../../worker/agents/rag/rank-passages.js';
import { citationIdOf, type RetrievedPassage } from '../../worker/agents/rag/retrieved-passage.js';
import { salientPhrases } from '../../worker/agents/rag/salient-phrases.js';
import { splitSentences } from '../../worker/agents/rag/split-sentences.js';

function passage(title: string, text: string, score = 1, round = 1): RetrievedPassage {
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
    round,
  };
}

describe('splitSentences', () => {
  it('splits at sentence ends and line breaks, not after abbreviations, initials or decimals', () => {
    expect(
      splitSentences(
        'Dr. Smith went to St. Louis. He met J. R. R. Tolkien! "Why?" he asked. The U.S. Army won in 1945. It was 3.5 km long.\nA heading\nNext.',
      ),
    ).toEqual([
      'Dr. Smith went to St. Louis.',
      'He met J. R. R. Tolkien!',
      '"Why?" he asked.',
      'The U.S. Army won in 1945.',
      'It was 3.5 km long.',
      'A heading',
      'Next.',
    ]);
  });
});

describe('salientPhrases', () => {
  it('finds capitalised names with their joiners, drops function words, months and what repeats', () => {
    expect(
      salientPhrases(
        'Kiss and Tell is a 1945 American comedy film starring Shirley Temple as Corliss Archer. In March, Shirley Temple met the Bank of England.',
      ),
    ).toEqual(['Kiss and Tell', 'American', 'Shirley Temple', 'Corliss Archer', 'Bank of England']);
    expect(salientPhrases('However, the Apollo 11 crew landed.')).toEqual(['Apollo 11']);
  });
});

describe('rankPassages', () => {
  const question = 'Which engineer designed the tower in Paris?';
  it('ranks by search score plus the coverage of the best sentence, key terms stemmed', () => {
    const ranked = rankPassages(question, [
      passage('Bridges', 'Paris has many bridges. Engineers like them. Towers are tall.', 1),
      passage(
        'Eiffel Tower',
        'The tower in Paris was designed by the engineer Gustave Eiffel. It opened in 1889.',
        0.8,
      ),
    ]);
    expect(ranked.map((entry) => entry.title)).toEqual(['Eiffel Tower', 'Bridges']);
    expect(ranked[0]!.bestSentence).toBe('The tower in Paris was designed by the engineer Gustave Eiffel.');
    expect(ranked[0]!.coverage).toBeGreaterThan(0.9);
  });

  it('with links on, a passage whose title a top passage names moves up; paragraphs of one title do not link', () => {
    const passages = [
      passage(
        'Kiss and Tell (1945 film)',
        'Kiss and Tell is a 1945 comedy film starring Shirley Temple as Corliss Archer.',
        1,
      ),
      passage('Unrelated comedy', 'A comedy film about a kiss, with Corliss and Archer in a film.', 0.9),
      passage('Shirley Temple', 'Shirley Temple Black served as Chief of Protocol of the United States.', 0.3, 2),
    ];
    const q = 'What position was held by the woman who portrayed Corliss Archer in the film Kiss and Tell?';
    expect(rankPassages(q, passages, { linkBonus: 0 }).map((entry) => entry.title)).toEqual([
      'Kiss and Tell (1945 film)',
      'Unrelated comedy',
      'Shirley Temple',
    ]);
    const linked = rankPassages(q, passages, { linkBonus: 1, linkFrom: 1 });
    expect(linked.map((entry) => entry.title)).toEqual([
      'Kiss and Tell (1945 film)',
      'Shirley Temple',
      'Unrelated comedy',
    ]);
    expect(linked[1]!.linked).toBe(true);
    const sameTitle = rankPassages(
      q,
      [
        passage('Amazon (paragraph 1)', 'The Amazon is long.'),
        passage('Amazon (paragraph 2)', 'The Amazon holds the film Kiss and Tell.'),
      ],
      { linkBonus: 1 },
    );
    expect(sameTitle.some((entry) => entry.linked)).toBe(false);
  });
});

describe('planExtractiveRound', () => {
  const question = 'What position was held by the woman who portrayed Corliss Archer in the film Kiss and Tell?';
  const film = passage(
    'Kiss and Tell (1945 film)',
    'Kiss and Tell is a 1945 American comedy film starring Shirley Temple as Corliss Archer.',
  );

  it('searches the question first', () => {
    expect(planExtractiveRound({ question, rounds: 0, maxIterations: 3, ranked: [] })).toMatchObject({
      kind: 'search',
      tool: 'search',
      query: question,
    });
  });

  it('weak results (no sentence holds enough of the question) → one refinement with the names the passages mention', () => {
    const ranked = rankPassages(question, [film]);
    expect(ranked[0]!.coverage).toBeLessThan(WEAK_COVERAGE);
    const move = planExtractiveRound({ question, rounds: 1, maxIterations: 3, ranked });
    expect(move).toMatchObject({ kind: 'search', tool: 'refine_and_search' });
    expect(move.kind === 'search' && move.query).toBe(refineQuery(question, ranked));
    // The question's key words, then the names it does not already say; the passage's own title is left out.
    expect(refineQuery(question, ranked)).toBe(
      'position held woman portrayed Corliss Archer film Kiss Tell American Shirley Temple',
    );
    expect(planExtractiveRound({ question, rounds: 2, maxIterations: 3, ranked })).toMatchObject({ kind: 'answer' });
  });

  it('strong results, or max_iterations 1, answer at once', () => {
    const strong = rankPassages('Who starred as Corliss Archer in Kiss and Tell?', [film]);
    expect(
      planExtractiveRound({
        question: 'Who starred as Corliss Archer in Kiss and Tell?',
        rounds: 1,
        maxIterations: 3,
        ranked: strong,
      }),
    ).toMatchObject({ kind: 'answer' });
    const weak = rankPassages(question, [film]);
    expect(planExtractiveRound({ question, rounds: 1, maxIterations: 1, ranked: weak })).toMatchObject({
      kind: 'answer',
      reason: expect.stringMatching(/max_iterations \(1\)/),
    });
  });
});

describe('extractAnswer', () => {
  it('copies the best sentence, and after a refinement the best sentence of the linked passage, with their ids', () => {
    const question = 'What position was held by the woman who portrayed Corliss Archer in the film Kiss and Tell?';
    const film = passage(
      'Kiss and Tell (1945 film)',
      'Kiss and Tell is a 1945 comedy film starring Shirley Temple as Corliss Archer. It was a hit.',
    );
    const actress = passage(
      'Shirley Temple',
      'Shirley Temple Black was an actress. She served as Chief of Protocol of the United States.',
      0.5,
      2,
    );
    const ranked = rankPassages(question, [film, actress], { linkBonus: 1 });
    expect(extractAnswer(ranked, { followLinks: false }).sentences).toEqual([
      {
        sentence: 'Kiss and Tell is a 1945 comedy film starring Shirley Temple as Corliss Archer.',
        passageId: film.id,
      },
    ]);
    const answer = extractAnswer(ranked, { followLinks: true });
    expect(answer.sentences.map((sentence) => sentence.passageId)).toEqual([film.id, actress.id]);
    expect(answer.notes.join(' ')).toMatch(/Shirley Temple/);
    expect(extractAnswer([], { followLinks: true })).toEqual({
      sentences: [],
      notes: [expect.stringMatching(/no passage was retrieved/)],
    });
  });

  it('follows a link only from the passage it answers with: a passage another top passage names is not cited', () => {
    const question = 'What position was held by the woman who portrayed Corliss Archer in the film Kiss and Tell?';
    const film = passage(
      'Kiss and Tell (1945 film)',
      'Kiss and Tell is a 1945 comedy film about Corliss Archer, a teenage girl. It was a hit.',
    );
    const other = passage(
      'A Kiss for Corliss',
      'A Kiss for Corliss is a 1949 film with Jane Doe in a supporting role.',
      0.9,
    );
    const named = passage('Jane Doe', 'Jane Doe was an actress. She later held no office.', 0.4, 2);
    const ranked = rankPassages(question, [film, other, named], { linkBonus: 1 });
    expect(ranked[0]!.id).toBe(film.id);
    expect(ranked.find((entry) => entry.id === named.id)!.linked).toBe(true);
    const answer = extractAnswer(ranked, { followLinks: true });
    expect(answer.sentences.map((sentence) => sentence.passageId)).toEqual([film.id]);
    // The same passage named by the answer's own passage is the second hop, and cited.
    const chained = passage(
      'Kiss and Tell (1945 film)',
      'Kiss and Tell is a 1945 comedy film about Corliss Archer, played by Jane Doe. It was a hit.',
    );
    const rankedChain = rankPassages(question, [chained, other, named], { linkBonus: 1 });
    expect(extractAnswer(rankedChain, { followLinks: true }).sentences.map((sentence) => sentence.passageId)).toEqual([
      chained.id,
      named.id,
    ]);
  });

  it('of the passages the answer’s passage names, cites the one that adds what the question asks beyond it', () => {
    const question = 'Which hedgehog did the singer of A Rather Blustery Day also voice?';
    const song = passage(
      'A Rather Blustery Day',
      'A Rather Blustery Day is a song from Winnie the Pooh and the Blustery Day, sung by Jim Cummings.',
    );
    // Ranked above the singer (a higher search score), but it says nothing of a hedgehog.
    const film = passage(
      'Winnie the Pooh and the Blustery Day',
      'Winnie the Pooh and the Blustery Day is a 1968 featurette with a blustery day.',
      0.8,
      2,
    );
    const singer = passage(
      'Jim Cummings',
      'Jim Cummings is an American voice actor. He voiced Sonic the Hedgehog in the 1990s.',
      0.3,
      2,
    );
    const ranked = rankPassages(question, [song, film, singer], { linkBonus: 1 });
    expect(ranked[0]!.id).toBe(song.id);
    expect(ranked.findIndex((entry) => entry.id === film.id)).toBeLessThan(
      ranked.findIndex((entry) => entry.id === singer.id),
    );
    expect(
      extractAnswer(ranked, { followLinks: true, question }).sentences.map((sentence) => sentence.passageId),
    ).toEqual([song.id, singer.id]);
    // Without a question to compare with, the best-ranked named passage, as before.
    expect(extractAnswer(ranked, { followLinks: true }).sentences.map((sentence) => sentence.passageId)).toEqual([
      song.id,
      film.id,
    ]);
  });
});
