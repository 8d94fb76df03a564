import { describe, expect, it } from 'vitest';
import { normalizeQuestion } from '../../shared/store/answer-cache.js';

describe('normalizeQuestion (the answer cache key)', () => {
  it('folds case, runs of white space and trailing punctuation; keeps what changes the question', () => {
    expect(normalizeQuestion('  Where is   Buhl?  ')).toBe('where is buhl');
    expect(normalizeQuestion('WHERE IS BUHL')).toBe('where is buhl');
    expect(normalizeQuestion('Where\tis\nBuhl?!…')).toBe('where is buhl');
    // Unicode compatibility forms (a full-width question mark, a ligature) are the plain ones.
    expect(normalizeQuestion('What is the ﬁrst quarter？')).toBe('what is the first quarter');
    // Punctuation inside the question and digits stay: "Q3 2022" is not "Q32022".
    expect(normalizeQuestion("What was Apple's revenue in Q3, 2022?")).toBe("what was apple's revenue in q3, 2022");
    expect(normalizeQuestion('Revenue in 2022?')).not.toBe(normalizeQuestion('Revenue in 2021?'));
  });
});
