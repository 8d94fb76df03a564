import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../shared/contracts/errors.js';
import { readDoc, repoRoot } from '../helpers/doc-pages.js';

const page = 'docs/reference/errors.md';

/** The codes only HTTP answers carry, read from the ApiErrorCode type (a type has no runtime list). */
function httpOnlyCodes(): string[] {
  const source = readFileSync(join(repoRoot, 'producer/api/errors.ts'), 'utf8');
  const declaration = /export type ApiErrorCode =([^;]+);/.exec(source)?.[1] ?? '';
  return [...declaration.matchAll(/'([A-Z_]+)'/g)].map((match) => match[1]!);
}

describe(page, () => {
  it('has a row for every error code of shared/contracts/errors.ts', () => {
    const rows = readDoc(page);
    expect(ERROR_CODES.filter((code) => !rows.includes(`| \`${code}\` |`))).toEqual([]);
  });

  it('has a row for every code only the HTTP API answers with', () => {
    const codes = httpOnlyCodes();
    expect(codes).toContain('UNAUTHORIZED');
    const rows = readDoc(page);
    expect(codes.filter((code) => !rows.includes(`| \`${code}\` |`))).toEqual([]);
  });
});
