import { expect } from 'vitest';
import type { z } from 'zod';
import { AgentqError } from '../../shared/contracts/errors.js';

/** What a config reader made of one variable: its value, or its refusal (message and code). */
export type ReaderOutcome = { value: unknown } | { message: string; code?: string };

/** Runs `read` and answers the field `key` of what it read, or the AgentqError it threw. */
export function readOutcome<C>(read: () => C, key: keyof C): ReaderOutcome {
  try {
    return { value: read()[key] };
  } catch (error) {
    expect(error).toBeInstanceOf(AgentqError);
    return { message: (error as AgentqError).message, code: (error as AgentqError).code };
  }
}

/**
 * For every value of every variable: the light reader gives what the variable's old zod schema gave
 * (the same value, or the same refusal worded as the configuration words it, code INVALID_INPUT), and
 * the full configuration gives the same as the light reader. Answers how many values were refused.
 */
export function expectReaderMatchesZod<C>({
  values,
  zodSchemas,
  configKeys,
  light,
  full,
}: {
  values: Record<string, string[]>;
  zodSchemas: Record<string, z.ZodType>;
  configKeys: Record<string, keyof C>;
  light: (env: Record<string, string>) => C;
  full: (env: Record<string, string>) => C;
}): number {
  let refusals = 0;
  for (const [name, cases] of Object.entries(values)) {
    for (const value of cases) {
      const parsed = zodSchemas[name]!.safeParse(value);
      const expected: ReaderOutcome = parsed.success
        ? { value: parsed.data }
        : {
            message: `invalid configuration: ${parsed.error.issues.map((issue) => `${name}: ${issue.message}`).join('; ')} (see the configuration table in README.md)`,
            code: 'INVALID_INPUT',
          };
      const label = `${name}=${JSON.stringify(value)}`;
      const lightOutcome = readOutcome(() => light({ [name]: value }), configKeys[name]!);
      if ('message' in expected) refusals += 1;
      expect(lightOutcome, label).toEqual(expected);
      expect(
        readOutcome(() => full({ [name]: value }), configKeys[name]!),
        label,
      ).toEqual(lightOutcome);
    }
  }
  return refusals;
}
