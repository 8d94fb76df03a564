import { describe, expect, it } from 'vitest';
import { containsGold, secCompanyOf, userMetrics, type GoldAnswer } from '../../bench/eval/user-metrics.js';

const gold = new Map<string, GoldAnswer>([
  ['q1', { id: 'q1', answers: ['the Warsaw Pact'], goldDocIds: ['Warsaw__p001'] }],
  ['q2', { id: 'q2', answers: ['yes'], goldDocIds: ['Alpha', 'Beta'] }],
  ['s1', { id: 's1', answers: ['long answer'], goldDocIds: ['2023_Q1_AAPL', '2023_Q2_AAPL'] }],
]);

describe('eval: what users feel beside recall', () => {
  it('answer_contains_gold compares SQuAD-normalised words, not substrings of words', () => {
    expect(containsGold('It joined the Warsaw Pact in 1955.', ['Warsaw Pact'])).toBe(true);
    expect(containsGold('Yes. Both are American.', ['yes'])).toBe(true);
    expect(containsGold('Yesterday it rained.', ['yes'])).toBe(false);
  });

  it('cited_doc_precision counts only the documents the answer cites, averaged over answers that cite any', () => {
    const metrics = userMetrics(gold, [
      { id: 'q1', answer: 'Warsaw Pact', citedDocIds: ['Warsaw__p001', 'Paris__p002'], rankedDocIds: [] },
      { id: 'q2', answer: 'not found in the documents', citedDocIds: [], rankedDocIds: ['Alpha'] },
    ]);
    expect(metrics).toEqual({ cited_doc_precision: 50, answer_contains_gold: 50, answers_citing: 50 });
  });

  it("right_company_at_1: the first cited document (else the first ranked) is by the gold documents' company", () => {
    const answers = [{ id: 's1', answer: '…', citedDocIds: ['2022_Q3_AAPL'], rankedDocIds: ['2022_Q3_AAPL'] }];
    expect(userMetrics(gold, answers, { companyOf: secCompanyOf }).right_company_at_1).toBe(100);
    expect(
      userMetrics(gold, [{ ...answers[0]!, citedDocIds: [], rankedDocIds: ['2023_Q1_MSFT'] }], {
        companyOf: secCompanyOf,
      }).right_company_at_1,
    ).toBe(0);
    expect(secCompanyOf('Warsaw__p001')).toBeUndefined();
  });
});
