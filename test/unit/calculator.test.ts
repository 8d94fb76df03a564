import { describe, expect, it } from 'vitest';
import { calculatorTool } from '../../worker/agents/tools/calculator.js';
import { evaluateArithmetic } from '../../worker/agents/tools/evaluate-arithmetic.js';

describe('evaluateArithmetic', () => {
  it.each([
    ['1 + 2 * 3', 7],
    ['(1 + 2) * 3', 9],
    ['10 - 4 - 3', 3],
    ['100 / 10 / 5', 2],
    ['2 ^ 10', 1024],
    ['2 ^ 3 ^ 2', 512],
    ['-2 ^ 2', -4],
    ['(-2) ^ 2', 4],
    ['2 ^ -1', 0.5],
    ['-3 * -(2 + 1)', 9],
    ['--3', 3],
    ['+4', 4],
    ['17 % 5', 2],
    ['-17 % 5', -2],
    ['2 * 3 % 4', 2],
    ['1.5 * .5', 0.75],
    ['0.1 + 0.2', 0.3],
    ['1e3 + 2.5E-1', 1000.25],
    ['  ( ( 7 ) )  ', 7],
    ['3 - -3', 6],
  ])('%s = %d', (expression, expected) => {
    expect(evaluateArithmetic(expression)).toBe(expected);
  });

  it.each([
    ['', 'the expression is empty'],
    ['   ', 'the expression is empty'],
    ['1 +', 'the expression ends early: expected a number or "("'],
    ['(1 + 2', "the '(' at position 1 is never closed"],
    ['1 + 2)', "unexpected ')' at position 6: expected an operator or the end"],
    ['2(3)', "unexpected '(' at position 2: expected an operator or the end"],
    ['1 / 0', 'division by zero at position 3'],
    ['5 % (2 - 2)', 'remainder by zero at position 3'],
    ['2 ** 3', 'unexpected \'*\' at position 4: expected a number or "("'],
    ['abc', 'unexpected \'a\' at position 1: expected a number or "("'],
    ['Math.max(1)', "unexpected 'M' at position 1"],
    ['10 ^ 400', 'the result is not a finite number'],
    ['1..2', "unexpected '.' at position 3"],
  ])('%j fails: %s', (expression, message) => {
    expect(() => evaluateArithmetic(expression)).toThrow(message);
  });

  it('refuses absurd nesting and length instead of overflowing the stack', () => {
    expect(() => evaluateArithmetic('('.repeat(500) + '1' + ')'.repeat(500))).toThrow(/nests deeper than 200 levels/);
    expect(() => evaluateArithmetic('-'.repeat(300) + '1')).toThrow(/nests deeper/);
    expect(() => evaluateArithmetic('1+'.repeat(1500) + '1')).toThrow(/at most 2000 are accepted/);
  });
});

describe('calculator tool', () => {
  it('returns the expression and its result', async () => {
    expect(await calculatorTool.execute({ expression: '2^10' }, {} as never)).toEqual({
      expression: '2^10',
      result: 1024,
    });
  });

  it('describes itself to the model with a JSON Schema', () => {
    expect(calculatorTool.describe()).toMatchObject({
      name: 'calculator',
      parameters: { type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'] },
    });
    expect(calculatorTool.parameters.$schema).toBeUndefined();
  });
});
