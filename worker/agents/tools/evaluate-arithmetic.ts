/** An arithmetic expression that cannot be evaluated; the message says where and why. */
class ArithmeticError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ArithmeticError';
  }
}

const MAX_LENGTH = 2000;
const MAX_DEPTH = 200;

/**
 * Evaluates `+ - * / % ^`, parentheses, unary minus and plus, and decimal numbers (`1.5`, `.5`, `2e3`)
 * with a small recursive-descent parser: no `eval`, so a model cannot run code through it.
 *
 * Precedence, lowest first: `+ -`; `* / %`; unary `- +`; `^` (right-associative, so `2^3^2` = 512 and
 * `-2^2` = -4, as in mathematics). `%` is the remainder (sign of the dividend, as in JavaScript).
 */
export function evaluateArithmetic(expression: string): number {
  if (expression.length > MAX_LENGTH)
    throw new ArithmeticError(
      `the expression is ${expression.length} characters long; at most ${MAX_LENGTH} are accepted`,
    );
  const parser = new Parser(expression);
  const value = parser.parse();
  if (!Number.isFinite(value))
    throw new ArithmeticError(`the result is not a finite number (${value}): the numbers grew too large`);
  // Hide binary floating-point noise (0.1 + 0.2) without losing meaningful digits.
  return Number(value.toPrecision(15));
}

class Parser {
  private position = 0;
  private depth = 0;

  constructor(private readonly text: string) {}

  parse(): number {
    this.skipSpaces();
    if (this.position >= this.text.length) throw new ArithmeticError('the expression is empty');
    const value = this.additive();
    this.skipSpaces();
    if (this.position < this.text.length) throw this.unexpected('an operator or the end');
    return value;
  }

  private additive(): number {
    let value = this.multiplicative();
    for (;;) {
      const operator = this.peekOperator('+-');
      if (!operator) return value;
      this.position += 1;
      const right = this.multiplicative();
      value = operator === '+' ? value + right : value - right;
    }
  }

  private multiplicative(): number {
    let value = this.unary();
    for (;;) {
      const operator = this.peekOperator('*/%');
      if (!operator) return value;
      const at = this.position;
      this.position += 1;
      const right = this.unary();
      if ((operator === '/' || operator === '%') && right === 0) {
        throw new ArithmeticError(`${operator === '/' ? 'division' : 'remainder'} by zero at position ${at + 1}`);
      }
      value = operator === '*' ? value * right : operator === '/' ? value / right : value % right;
    }
  }

  private unary(): number {
    const operator = this.peekOperator('+-');
    if (operator) {
      this.position += 1;
      return this.nested(() => (operator === '-' ? -this.unary() : this.unary()));
    }
    return this.power();
  }

  private power(): number {
    const base = this.primary();
    if (!this.peekOperator('^')) return base;
    this.position += 1;
    // The exponent may itself be signed (2^-1) and is right-associative (2^3^2 = 2^9).
    const exponent = this.nested(() => this.unary());
    return base ** exponent;
  }

  private primary(): number {
    this.skipSpaces();
    const character = this.text[this.position];
    if (character === '(') {
      const open = this.position;
      this.position += 1;
      const value = this.nested(() => this.additive());
      this.skipSpaces();
      if (this.text[this.position] !== ')') {
        throw this.position >= this.text.length
          ? new ArithmeticError(`the '(' at position ${open + 1} is never closed`)
          : this.unexpected("')'");
      }
      this.position += 1;
      return value;
    }
    const match = /^(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/.exec(this.text.slice(this.position));
    if (!match) throw this.unexpected('a number or "("');
    this.position += match[0].length;
    return Number(match[0]);
  }

  /** The operator at the cursor (after spaces) if it is one of `operators`. */
  private peekOperator(operators: string): string | undefined {
    this.skipSpaces();
    const character = this.text[this.position];
    return character !== undefined && operators.includes(character) ? character : undefined;
  }

  private nested(parse: () => number): number {
    this.depth += 1;
    if (this.depth > MAX_DEPTH) throw new ArithmeticError(`the expression nests deeper than ${MAX_DEPTH} levels`);
    try {
      return parse();
    } finally {
      this.depth -= 1;
    }
  }

  private skipSpaces(): void {
    while (this.position < this.text.length && /\s/.test(this.text[this.position]!)) this.position += 1;
  }

  private unexpected(expected: string): ArithmeticError {
    if (this.position >= this.text.length)
      return new ArithmeticError(`the expression ends early: expected ${expected}`);
    return new ArithmeticError(
      `unexpected '${this.text[this.position]}' at position ${this.position + 1}: expected ${expected}`,
    );
  }
}
