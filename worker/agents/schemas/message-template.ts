import { z } from 'zod';
import { AgentqError } from '../../../shared/contracts/errors.js';

/** `{{name}}` (spaces inside the braces allowed), the variable syntax of AiServices' prompt templates. */
const VARIABLE = /\{\{\s*([A-Za-z_][A-Za-z0-9_.-]{0,63})\s*\}\}/g;

/** A run's template variables: names of letters, digits, `_`, `.`, `-` (a letter or `_` first), text values. */
export const templateVariablesSchema = z
  .record(
    z
      .string()
      .regex(
        /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/,
        'variable names are 1-64 characters of letters, digits, "_", "." or "-", starting with a letter or "_"',
      ),
    z.string().max(100_000),
  )
  .refine((variables) => Object.keys(variables).length <= 100, { message: 'at most 100 variables' });

/** The variables `template` uses, in order of first use. */
function templateVariables(template: string): string[] {
  return [...new Set([...template.matchAll(VARIABLE)].map((match) => match[1]!))];
}

/** The variables `template` uses that `variables` has no value for. */
export function missingVariables(template: string, variables: Readonly<Record<string, string>>): string[] {
  return templateVariables(template).filter((name) => !Object.hasOwn(variables, name));
}

/**
 * `template` with each `{{name}}` replaced by its value, in one pass (a value that itself contains
 * `{{…}}` stays as it is: values are data, not templates). A variable with no value is INVALID_INPUT
 * naming it and the field (`what`), so a run never reaches the model with a hole in its prompt.
 */
export function renderTemplate(template: string, variables: Readonly<Record<string, string>>, what: string): string {
  const missing = missingVariables(template, variables);
  if (missing.length > 0) {
    throw new AgentqError(
      'INVALID_INPUT',
      `variables: ${what} uses ${missing.map((name) => `{{${name}}}`).join(', ')} but variables has no value for ${missing.length > 1 ? 'them' : 'it'}; add ${missing.map((name) => `"${name}"`).join(', ')} to variables`,
      { details: { field: what, missing } },
    );
  }
  return template.replace(VARIABLE, (_match, name: string) => variables[name]!);
}
