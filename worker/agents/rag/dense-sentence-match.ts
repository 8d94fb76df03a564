import { BoundedMemo } from '../../../shared/contracts/bounded-memo.js';
import type { NodeContext } from '../../../shared/graph/node-context.js';
import { embedTexts } from '../llm/embed-texts.js';
import type { Embedder } from '../../../shared/ports/embedder.js';
import { cosineSimilarity } from '../../../shared/retrieval/cosine-similarity.js';
import { keyTerms } from './key-terms.js';
import { normalizedTitle, type DenseMatch, type RankedPassage } from './rank-passages.js';
import { splitSentences } from './split-sentences.js';

/** The best passages whose sentences are compared with the question. @default 3 */
const DENSE_MATCH_CANDIDATES = 3;
/** Sentences of each passage compared: those sharing the most key terms with the question (more found nothing more on SQuAD). @default 2 */
const DENSE_MATCH_SENTENCES = 2;
/**
 * Only when the two best passages' lexical relevance (search score + best sentence's coverage) lies
 * within this margin: comparing beyond it gained nothing on SQuAD (recall@1 the same at 0.2, 0.3, 0.5
 * and 0.8), and with the one-source rule four SQuAD questions in five stop here, embedding nothing.
 * @default 0.2
 */
export const DENSE_MATCH_MARGIN = 0.2;
/** Sentence vectors kept per process: a batch's questions meet the same passages again. ~2 KB each. @default 4096 */
const cache = new BoundedMemo<string, Float32Array>({ limit: 4096, evict: 'oldest' });

/** How the run's reasoning_steps begin the line that says the comparison ran (the eval counts them). */
export const DENSE_MATCH_NOTE = 'compared the meaning of';

/**
 * How closely the best passages' likeliest sentences mean what the question asks, by the embedder's
 * cosine similarity: passage id → sentence position → similarity (-1…1). The lexical ranking matches words;
 * a question that paraphrases its answer ("conceived" / "first planned") loses to a passage that
 * repeats the question's words in another sense. Asked only of an in-process embedder (the local
 * model: no request to pay for), and only when the two lexically best passages are close
 * (DENSE_MATCH_MARGIN) and from one source (`oneSource`); otherwise an empty map.
 */
export async function denseSentenceMatch(
  context: NodeContext,
  embedder: Embedder | undefined,
  question: string,
  ranked: readonly RankedPassage[],
): Promise<DenseMatch> {
  if (!embedder?.inProcess) return {};
  const candidates = ranked.slice(0, DENSE_MATCH_CANDIDATES);
  const [first, second] = [...candidates].sort((left, right) => lexicalRelevance(right) - lexicalRelevance(left));
  if (
    !first ||
    !second ||
    lexicalRelevance(first) - lexicalRelevance(second) > DENSE_MATCH_MARGIN ||
    !oneSource(first, second)
  )
    return {};
  const asked = new Set(keyTerms(question));
  const sentencesOf = candidates.map((passage) => likeliestSentences(passage.text, asked));
  const keyOf = (text: string) => `${embedder.modelId}\u0000${text}`;
  const missing = [...new Set(sentencesOf.flat().map(({ sentence }) => sentence))].filter(
    (sentence) => !cache.has(keyOf(sentence)),
  );
  const { vectors } = await embedTexts(context, embedder, [question, ...missing], { key: 'dense-sentence-match' });
  missing.forEach((sentence, index) => cache.set(keyOf(sentence), Float32Array.from(vectors[index + 1]!)));
  const asking = Float32Array.from(vectors[0]!);
  const match: DenseMatch = {};
  candidates.forEach((passage, index) => {
    const similarity: Record<string, number> = {};
    for (const { sentence, position } of sentencesOf[index]!) {
      const vector = cache.get(keyOf(sentence));
      if (vector) similarity[position] = cosineSimilarity(asking, vector);
    }
    if (Object.keys(similarity).length > 0) match[passage.id] = similarity;
  });
  return match;
}

function lexicalRelevance(passage: RankedPassage): number {
  return passage.score + passage.coverage;
}

/**
 * Two passages of one document, or of one title (an article's paragraphs): they share its names and
 * topic words, so words tell them apart badly. Passages of different documents differ in the names
 * they hold, and there the meaning added nothing on HotpotQA (as many first passages lost as won,
 * at 1.7× the question phase's CPU).
 */
function oneSource(left: RankedPassage, right: RankedPassage): boolean {
  return left.docId === right.docId || normalizedTitle(left.title) === normalizedTitle(right.title);
}

/** The passage's sentences sharing the most of the question's key terms (earlier first on ties), with their positions in `splitSentences(text)`. */
function likeliestSentences(text: string, asked: ReadonlySet<string>): { sentence: string; position: number }[] {
  return splitSentences(text)
    .map((sentence, position) => ({
      sentence,
      position,
      shared: keyTerms(sentence).filter((term) => asked.has(term)).length,
    }))
    .sort((left, right) => right.shared - left.shared || left.position - right.position)
    .slice(0, DENSE_MATCH_SENTENCES);
}
