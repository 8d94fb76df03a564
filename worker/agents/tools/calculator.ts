import { z } from 'zod';
import { defineTool } from '../../../shared/ports/define-tool.js';
import { evaluateArithmetic } from './evaluate-arithmetic.js';

/** Built-in tool: exact arithmetic, so the model does not have to guess at it. */
export const calculatorTool = defineTool({
  name: 'calculator',
  description:
    'Evaluates an arithmetic expression and returns the number. Supports + - * / % (remainder) ^ (power), parentheses, unary minus and decimals, e.g. "(2.5 + 3) * -4 ^ 2".',
  input: z.object({
    expression: z.string().min(1).max(2000).describe('The arithmetic expression, e.g. "2^10 / (3 + 1)"'),
  }),
  execute: ({ expression }) => ({ expression, result: evaluateArithmetic(expression) }),
});
