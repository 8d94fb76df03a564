import type { RankedPassage } from './rank-passages.js';
import { splitSentences } from './split-sentences.js';

/** One sentence of an extractive answer and the passage it was copied from. */
export interface ExtractedSentence {
  sentence: string;
  /** The passage's citation id (`RetrievedPassage.id`). */
  passageId: string;
}

export interface ExtractiveAnswer {
  /** The sentences, best first; empty when the run retrieved nothing. */
  sentences: ExtractedSentence[];
  /** What the answerer did, for `reasoning_steps`. */
  notes: string[];
}

/**
 * The extractive answer: no generation, only copying. The sentence of the best passage that holds the
 * most of the question's key terms; and, when the run followed a link (a passage named by a top
 * passage, the second hop of a multi-hop question), the best sentence of that passage too, since the
 * answer to such a question is usually there.
 */
export function extractAnswer(ranked: readonly RankedPassage[], { followLinks }: { followLinks: boolean }): ExtractiveAnswer {
  const best = ranked[0];
  if (!best) return { sentences: [], notes: ['no passage was retrieved, so there is nothing to answer from'] };
  const sentences: ExtractedSentence[] = [{ sentence: sentenceOf(best), passageId: best.id }];
  const notes = [`answered with the best sentence of "${best.title}" (it holds ${Math.round(best.coverage * 100)}% of the question's key terms)`];
  if (followLinks) {
    const linked = ranked.find((passage) => passage.linked && passage.docId !== best.docId);
    if (linked) {
      sentences.push({ sentence: sentenceOf(linked), passageId: linked.id });
      notes.push(`added the best sentence of "${linked.title}", which "${best.title}" or another top passage names`);
    }
  }
  return { sentences, notes };
}

/** The passage's best sentence, or its first one when no sentence shares a key term with the question. */
function sentenceOf(passage: RankedPassage): string {
  return passage.bestSentence || splitSentences(passage.text)[0] || passage.text.slice(0, 300);
}
