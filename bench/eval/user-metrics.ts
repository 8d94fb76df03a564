import { readFileSync } from 'node:fs';

/** The gold side of one question of a set (questions.jsonl). */
export interface GoldAnswer {
  id: string;
  answers: string[];
  goldDocIds: string[];
}

/** What one answer showed its user: its text and the documents it cites (its sources, in order; not the other retrieved ones). */
export interface ShownAnswer {
  id: string;
  answer: string;
  citedDocIds: string[];
  /** Every document the run ranked, cited first: where a source-less answer's "first document" comes from. */
  rankedDocIds: string[];
}

/** What a user of the answers feels, beside the scorer's retrieval recall. Shares in 0…100. */
export interface UserMetrics {
  /** Of the documents an answer cites, the share that are gold; averaged over answers that cite any. */
  cited_doc_precision: number;
  /** Answers that contain a gold answer after SQuAD normalisation (lower case, no punctuation or articles). */
  answer_contains_gold: number;
  /** Answers whose first cited document is by the gold documents' company (sets whose documents have one). */
  right_company_at_1?: number;
  /** Answers that cite at least one document. */
  answers_citing: number;
}

export function readGold(file: string): Map<string, GoldAnswer> {
  const gold = new Map<string, GoldAnswer>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const row = JSON.parse(line) as { id: string | number; answers?: unknown[]; gold_doc_ids?: unknown[] };
    gold.set(String(row.id), {
      id: String(row.id),
      answers: (row.answers ?? []).map(String),
      goldDocIds: (row.gold_doc_ids ?? []).map(String),
    });
  }
  return gold;
}

/** SQuAD's answer normalisation, as ../shared/eval/score.py does it (ASCII punctuation, English articles). */
export function normalizeAnswer(text: string): string {
  return text
    .toLowerCase()
    .replace(/[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/g, '')
    .replace(/\b(a|an|the)\b/g, ' ')
    .split(/\s+/)
    .filter(Boolean)
    .join(' ');
}

/** Whether the normalised answer holds the normalised gold answer as whole words. */
export function containsGold(answer: string, golds: readonly string[]): boolean {
  const normalized = ` ${normalizeAnswer(answer)} `;
  return golds.some((gold) => {
    const wanted = normalizeAnswer(gold);
    return wanted.length > 0 && normalized.includes(` ${wanted} `);
  });
}

/** The company of an SEC set's document id (`2023_Q1_AAPL` → `AAPL`); undefined for ids of other sets. */
export function secCompanyOf(docId: string): string | undefined {
  return /^\d{4}_Q\d_([A-Z.]+)$/.exec(docId)?.[1];
}

/** The metrics over the answers that have gold; `companyOf` turns on right_company_at_1. */
export function userMetrics(
  gold: ReadonlyMap<string, GoldAnswer>,
  answers: readonly ShownAnswer[],
  { companyOf }: { companyOf?: (docId: string) => string | undefined } = {},
): UserMetrics {
  const scored = answers.filter((answer) => gold.has(answer.id));
  const percent = (count: number, total: number) => (total === 0 ? 0 : (100 * count) / total);
  const citing = scored.filter((answer) => answer.citedDocIds.length > 0);
  const precisionSum = citing.reduce((sum, answer) => {
    const goldIds = new Set(gold.get(answer.id)!.goldDocIds);
    return sum + answer.citedDocIds.filter((docId) => goldIds.has(docId)).length / answer.citedDocIds.length;
  }, 0);
  const metrics: UserMetrics = {
    cited_doc_precision: percent(precisionSum, citing.length),
    answer_contains_gold: percent(
      scored.filter((answer) => containsGold(answer.answer, gold.get(answer.id)!.answers)).length,
      scored.length,
    ),
    answers_citing: percent(citing.length, scored.length),
  };
  if (companyOf) {
    const right = scored.filter((answer) => {
      const first = answer.citedDocIds[0] ?? answer.rankedDocIds[0];
      const company = first === undefined ? undefined : companyOf(first);
      return company !== undefined && gold.get(answer.id)!.goldDocIds.some((docId) => companyOf(docId) === company);
    });
    metrics.right_company_at_1 = percent(right.length, scored.length);
  }
  return metrics;
}
