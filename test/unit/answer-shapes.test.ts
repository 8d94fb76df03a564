import { describe, expect, it } from 'vitest';
import { extractAnswer } from '../../worker/agents/rag/extract-answer.js';
import { questionShape } from '../../worker/agents/rag/question-shape.js';
import { rankPassages } from '../../worker/agents/rag/rank-passages.js';
import { citationIdOf, type RetrievedPassage } from '../../worker/agents/rag/retrieved-passage.js';

function passage(title: string, text: string, score = 1): RetrievedPassage {
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

const answer = (question: string, passages: RetrievedPassage[]) =>
  extractAnswer(rankPassages(question, passages, { linkBonus: 0 }), { followLinks: false, question });

describe('answers that fit the question', () => {
  it('reads the shape of a question from its wording', () => {
    expect(questionShape('Which is older, the Eiffel Tower or Big Ben?')).toEqual({
      kind: 'comparison',
      options: ['Eiffel Tower', 'Big Ben'],
      criterion: 'earliest',
    });
    expect(questionShape('Are both Ed Wood and Scott Derrickson American?')).toMatchObject({
      kind: 'yes-no',
      pair: ['Ed Wood', 'Scott Derrickson'],
    });
    expect(questionShape('How many moons does Mars have?')).toEqual({ kind: 'numeric', wants: 'number' });
    expect(questionShape('Who designed the tower?')).toEqual({ kind: 'open' });
  });

  it('a comparison answers with the entity and cites both supporting sentences', () => {
    const tower = passage(
      'Eiffel Tower',
      'The Eiffel Tower is a wrought-iron tower in Paris completed in 1889. It is 330 metres tall.',
    );
    const ben = passage(
      'Big Ben',
      'Big Ben is the nickname for the Great Bell of the clock at Westminster, completed in 1859. It is a tourist sight.',
      0.8,
    );
    const result = answer('Which is older, the Eiffel Tower or Big Ben?', [tower, ben]);
    expect(result.lead).toBe('Big Ben.');
    expect(result.sentences.map((sentence) => sentence.passageId).sort()).toEqual([tower.id, ben.id].sort());
  });

  it('a yes/no question about two things answers Yes or No, with both sentences cited', () => {
    const wood = passage('Ed Wood', 'Edward Davis Wood Jr. was an American filmmaker, actor and writer.');
    const derrickson = passage(
      'Scott Derrickson',
      'Scott Derrickson is an American director, screenwriter and producer.',
    );
    const kurosawa = passage('Akira Kurosawa', 'Akira Kurosawa was a Japanese filmmaker and painter.');
    expect(answer('Were Ed Wood and Scott Derrickson of the same nationality?', [wood, derrickson]).lead).toBe('Yes.');
    const different = answer('Were Ed Wood and Akira Kurosawa of the same nationality?', [wood, kurosawa]);
    expect(different.lead).toBe('No.');
    expect(different.sentences).toHaveLength(2);
  });

  it('a comparison cites the passage titled by each option, not a better-ranked one whose title only contains it', () => {
    const discography = passage(
      'Foo Fighters discography',
      'The discography of Foo Fighters, formed in 1994, consists of ten studio albums.',
    );
    const film = passage('Ed Wood (film)', 'Ed Wood is a 1994 film about the filmmaker Ed Wood.');
    const band = passage('Foo Fighters', 'Foo Fighters is an American rock band formed in Seattle in 1994.', 0.6);
    const person = passage('Ed Wood', 'Edward Davis Wood Jr. (born 1924) was an American filmmaker.', 0.5);
    const result = answer('Which is older, Ed Wood or Foo Fighters?', [discography, film, band, person]);
    expect(result.sentences.map((sentence) => sentence.passageId).sort()).toEqual([band.id, person.id].sort());
    // With no passage titled by the option, the closest title that holds it still answers for it.
    const fallback = answer('Which is older, Ed Wood or Foo Fighters?', [discography, film]);
    expect(fallback.sentences.map((sentence) => sentence.passageId).sort()).toEqual([discography.id, film.id].sort());
  });

  it('a quantity question answers with the number and unit of the cited sentence', () => {
    const result = answer('How many moons does Mars have?', [
      passage('Mars', 'Mars is the fourth planet. Mars has 2 moons, Phobos and Deimos.'),
    ]);
    expect(result.lead).toBe('2 moons.');
    expect(result.sentences[0]!.sentence).toBe('Mars has 2 moons, Phobos and Deimos.');
  });

  it('says "not found in the documents" when no sentence supports an answer, and cites nothing', () => {
    const result = answer('What is the boiling point of liquid nitrogen in kelvin?', [
      passage('Okapi', 'The okapi is a giraffid native to the Congo basin.'),
    ]);
    expect(result.lead).toBe('Not found in the documents.');
    expect(result.sentences).toEqual([]);
  });

  it('never answers with a contents line', () => {
    const toc = passage('Contents', 'Item 1A. Risk Factors 34');
    const real = passage('Risk', 'Risk factors include supply shortages of chips and factors in demand.', 0.5);
    const result = answer('What risk factors are there?', [toc, real]);
    expect(result.sentences[0]!.passageId).toBe(real.id);
  });
});
