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
 * For every value of every variable: the light reader accepts what the variable's old zod schema accepted,
 * with the same value, and refuses what it refused, code INVALID_INPUT, with a message that names the
 * variable, the value given and the reference page; the full configuration gives the same as the light
 * reader, message for message. Answers how many values were refused.
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
      const label = `${name}=${JSON.stringify(value)}`;
      const lightOutcome = readOutcome(() => light({ [name]: value }), configKeys[name]!);
      if (parsed.success) {
        expect(lightOutcome, label).toEqual({ value: parsed.data });
      } else {
        refusals += 1;
        expect(lightOutcome, label).toEqual({
          code: 'INVALID_INPUT',
          message: expect.stringMatching(
            new RegExp(
              `^invalid configuration: ${name}: must be .+, got ${escapeRegExp(JSON.stringify(value))} \\(see docs/reference/configuration\\.md\\)$`,
            ),
          ),
        });
      }
      expect(
        readOutcome(() => full({ [name]: value }), configKeys[name]!),
        label,
      ).toEqual(lightOutcome);
    }
  }
  return refusals;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
