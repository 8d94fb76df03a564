import { keyTerms } from './key-terms.js';
import { normalizedTitle, type RankedPassage } from './rank-passages.js';
import type { ComparisonCriterion, QuestionShape } from './question-shape.js';
import { splitSentences } from './split-sentences.js';

/** An answer fitted to the question's shape: a short lead ("Yes.", "Shirley Temple.", "412 million.") and the sentences that support it. */
interface ShapedAnswer {
  lead: string;
  support: { sentence: string; passageId: string }[];
  note: string;
}

const YEAR = /\b(1[0-9]{3}|20[0-9]{2})\b/;
const NUMBER =
  /(?:[$€£¥]\s?)?\d[\d,]*(?:\.\d+)?(?:\s?(?:%|percent|per cent))?(?:\s(?:million|billion|thousand|trillion|hundred))?(?:\s(?!and\b|or\b|the\b|in\b|of\b|to\b|a\b|an\b)[\p{L}]+)?/gu;
const NEGATION = /\b(?:not|no|never|neither|nor|none|n't|cannot|without)\b/i;
/** Nationality-like adjectives: "American", "Japanese", "British", "Israeli". */
const DEMONYM = /\b([A-Z][a-z]+(?:an|ian|ese|ish|ch|i|ic))\b/;

/**
 * The passage that speaks about `name`: the one titled exactly by it, else by it with a qualifier
 * ("Ed Wood (film)"), else the closest title that holds it or that it holds ("Foo Fighters
 * discography" only when no "Foo Fighters" was retrieved), else the best-ranked one that says it.
 * Ties keep rank order.
 */
function passageAbout(name: string, ranked: readonly RankedPassage[]): RankedPassage | undefined {
  const wanted = name.toLowerCase();
  let best: { passage: RankedPassage; distance: number } | undefined;
  for (const passage of ranked) {
    const title = normalizedTitle(passage.title);
    const distance =
      passage.title.trim().toLowerCase() === wanted
        ? 0
        : title === wanted
          ? 1
          : title.length >= 4 && (wanted.includes(title) || title.includes(wanted))
            ? 2 + Math.abs(title.length - wanted.length)
            : undefined;
    if (distance !== undefined && (!best || distance < best.distance)) best = { passage, distance };
  }
  return best?.passage ?? ranked.find((passage) => passage.text.toLowerCase().includes(wanted));
}

/** The passage's opening sentence that states a year, else its best sentence. */
function sentenceWith(passage: RankedPassage, pattern: RegExp): string {
  return (
    splitSentences(passage.text).find((sentence) => pattern.test(sentence)) ??
    (passage.bestSentence || splitSentences(passage.text)[0] || passage.text.slice(0, 300))
  );
}

function valueOf(sentence: string, criterion: ComparisonCriterion): number | null {
  if (criterion === 'earliest' || criterion === 'latest') {
    const year = YEAR.exec(sentence);
    return year ? Number(year[1]) : null;
  }
  const number = /\d[\d,]*(?:\.\d+)?/.exec(sentence.replace(YEAR, ''));
  return number ? Number(number[0].replace(/,/g, '')) : null;
}

function comparison(
  options: readonly [string, string],
  criterion: ComparisonCriterion,
  ranked: readonly RankedPassage[],
): ShapedAnswer | null {
  const passages = options.map((option) => passageAbout(option, ranked));
  if (!passages[0] || !passages[1] || passages[0].id === passages[1].id) return null;
  const pattern = criterion === 'earliest' || criterion === 'latest' ? YEAR : /\d/;
  const sentences = passages.map((passage) => sentenceWith(passage!, pattern));
  const values = sentences.map((sentence) => valueOf(sentence, criterion));
  let pick: 0 | 1;
  let how: string;
  if (criterion !== 'unknown' && values[0] !== null && values[1] !== null && values[0] !== values[1]) {
    const lower = values[0]! < values[1]! ? 0 : 1;
    pick = criterion === 'earliest' || criterion === 'least' ? lower : lower === 0 ? 1 : 0;
    how = `compared ${values[0]} with ${values[1]} (${criterion})`;
  } else {
    pick = ranked.indexOf(passages[0]) <= ranked.indexOf(passages[1]) ? 0 : 1;
    how = 'no comparable figures in both passages; picked the better-supported option';
  }
  return {
    lead: `${options[pick]}.`,
    support: passages.map((passage, index) => ({ sentence: sentences[index]!, passageId: passage!.id })),
    note: `comparison of "${options[0]}" and "${options[1]}": ${how}`,
  };
}

function yesNo(
  shape: Extract<QuestionShape, { kind: 'yes-no' }>,
  ranked: readonly RankedPassage[],
): ShapedAnswer | null {
  const best = ranked[0]!;
  if (shape.pair) {
    const passages = shape.pair.map((name) => passageAbout(name, ranked));
    if (passages[0] && passages[1] && passages[0].id !== passages[1].id) {
      const propertyTerms = keyTerms(shape.property).filter((term) => !/^(?:both|same|each)$/.test(term));
      const sentences = passages.map((passage) => splitSentences(passage!.text)[0] ?? passage!.text.slice(0, 300));
      let yes: boolean;
      let how: string;
      if (
        /\b(?:same|nationality|country|both from)\b/i.test(shape.property) &&
        sentences.every((sentence) => DEMONYM.test(sentence))
      ) {
        const demonyms = sentences.map((sentence) => DEMONYM.exec(sentence)![1]);
        yes = demonyms[0] === demonyms[1];
        how = `${demonyms[0]} vs ${demonyms[1]}`;
      } else {
        const holds = passages.map((passage) => {
          const terms = new Set(keyTerms(passage!.text));
          return (
            propertyTerms.filter((term) => terms.has(term)).length >= Math.max(1, Math.ceil(propertyTerms.length * 0.5))
          );
        });
        yes = holds[0]! && holds[1]!;
        how = `"${shape.property}" ${holds[0] ? 'holds' : 'is not stated'} for "${shape.pair[0]}" and ${holds[1] ? 'holds' : 'is not stated'} for "${shape.pair[1]}"`;
      }
      return {
        lead: yes ? 'Yes.' : 'No.',
        support: passages.map((passage, index) => ({ sentence: sentences[index]!, passageId: passage!.id })),
        note: `yes/no question about two things: ${how}`,
      };
    }
  }
  const sentence = best.bestSentence || splitSentences(best.text)[0] || '';
  if (!sentence) return null;
  const negated = NEGATION.test(sentence);
  return {
    lead: negated ? 'No.' : 'Yes.',
    support: [{ sentence, passageId: best.id }],
    note: `yes/no question: the best sentence ${negated ? 'negates it' : 'states it'}`,
  };
}

function numeric(wants: 'year' | 'number', question: string, ranked: readonly RankedPassage[]): ShapedAnswer | null {
  const best = ranked[0]!;
  const sentence = best.bestSentence || splitSentences(best.text)[0] || '';
  const asked = new Set((question.match(/\d[\d,.]*/g) ?? []).map((number) => number.replace(/[,.]$/, '')));
  if (wants === 'year') {
    const year = [...sentence.matchAll(new RegExp(YEAR.source, 'g'))]
      .map((match) => match[1]!)
      .find((candidate) => !asked.has(candidate));
    return year
      ? {
          lead: `${year}.`,
          support: [{ sentence, passageId: best.id }],
          note: `a year question: ${year} from the cited sentence`,
        }
      : null;
  }
  const figure = [...sentence.matchAll(NUMBER)]
    .map((match) => match[0].trim())
    .find((candidate) => !asked.has(candidate.replace(/[^\d.,]/g, '').replace(/[,.]$/, '')));
  return figure
    ? {
        lead: `${figure}.`,
        support: [{ sentence, passageId: best.id }],
        note: `a quantity question: "${figure}" (number and unit) from the cited sentence`,
      }
    : null;
}

/** The answer the question's shape asks for, from the ranked passages; null when the shape is open or the passages do not give it. */
export function shapeAnswer(
  question: string,
  shape: QuestionShape,
  ranked: readonly RankedPassage[],
): ShapedAnswer | null {
  if (ranked.length === 0) return null;
  switch (shape.kind) {
    case 'comparison':
      return comparison(shape.options, shape.criterion, ranked);
    case 'yes-no':
      return yesNo(shape, ranked);
    case 'numeric':
      return numeric(shape.wants, question, ranked);
    case 'open':
      return null;
  }
}
