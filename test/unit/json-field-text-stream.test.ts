import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createJsonFieldTextStream } from '../../worker/agents/llm/json-field-text-stream.js';

describe('createJsonFieldTextStream', () => {
  it('yields the field text as the JSON arrives, escapes resolved even when cut in two', () => {
    const push = createJsonFieldTextStream('answer');
    const pieces = ['{"cita', 'tions": ["a"], "answ', 'er": "Par', 'is \\', 'n\\u00', 'e9t\\"é\\"', '", "x": "no"}'];
    expect(pieces.map(push)).toEqual(['', '', 'Par', 'is ', '\n', 'ét"é"', '']);
  });

  it('joins to the parsed value whatever the cut points (property)', () => {
    fc.assert(
      fc.property(fc.string(), fc.array(fc.nat(), { maxLength: 8 }), (answer, cuts) => {
        const json = JSON.stringify({ citations: ['x'], answer, other: 'y' });
        const points = [...new Set(cuts.map((cut) => cut % (json.length + 1)))].sort((left, right) => left - right);
        const push = createJsonFieldTextStream('answer');
        let text = '';
        let from = 0;
        for (const point of [...points, json.length]) {
          text += push(json.slice(from, point));
          from = point;
        }
        expect(text).toBe(answer);
      }),
    );
  });
});
