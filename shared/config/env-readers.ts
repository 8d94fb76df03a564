import { AgentqError } from '../contracts/errors.js';

/**
 * Readers of environment variables without zod, for the parts of the configuration that one-shot CLI
 * commands read (shared/config/redis-config.ts, shared/config/search-config.ts): loading zod is about a fifth of such
 * a command's start (issue 19, CLI cold start). Each reader words its refusals as zod did for the
 * schema the variable had in shared/config/config.ts, so moving a variable here changes no message (the unit
 * tests of those modules hold each one to zod's).
 */

/** What a variable's reader makes of its value: the value, or the problems that refuse it. */
export type Read<T> = { value: T; problems?: undefined } | { value?: undefined; problems: string[] };
export type Reader<T> = (value: string | undefined) => Read<T>;
/** The values a table of readers gives, by variable name. */
export type EnvValues<Readers extends Record<string, Reader<unknown>>> = {
  [Name in keyof Readers]: ReturnType<Readers[Name]> extends Read<infer T> ? T : never;
};

/** `env` without its empty values: an empty variable means unset, everywhere in the configuration. */
export function presentEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const present: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined && value !== '') present[name] = value;
  return present;
}

/** Reads each variable of `readers` from `env` (empty values dropped): the values, or `NAME: message` for each problem. */
export function readEnv<Readers extends Record<string, Reader<unknown>>>(
  readers: Readers,
  env: Record<string, string>,
): { values: EnvValues<Readers>; problems: string[] } {
  const values: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [name, reader] of Object.entries(readers)) {
    const read = reader(env[name]);
    if (read.problems) problems.push(...read.problems.map((message) => `${name}: ${message}`));
    else values[name] = read.value;
  }
  return { values: values as EnvValues<Readers>, problems };
}

/** The refusal of a configuration with these problems (`NAME: message` each). */
export function invalidConfiguration(problems: string[]): AgentqError {
  return new AgentqError(
    'INVALID_INPUT',
    `invalid configuration: ${problems.join('; ')} (see the configuration table in README.md)`,
  );
}

/** zod's `z.string()` (any non-empty value: empty ones are unset). */
export function text(value: string | undefined): Read<string> {
  return { value: value! };
}

/** zod's `z.enum(values, { error })`. */
export function oneOf<const T extends string>(values: readonly T[], message: string): Reader<T> {
  return (value) => ((values as readonly string[]).includes(value!) ? { value: value as T } : { problems: [message] });
}

export function optional<T>(reader: Reader<T>): Reader<T | undefined> {
  return (value) => (value === undefined ? { value: undefined } : reader(value));
}

export function withDefault<T>(fallback: T, reader: Reader<T>): Reader<T> {
  return (value) => (value === undefined ? { value: fallback } : reader(value));
}

/** zod's `z.string().url()`: what `URL` parses once trimmed, kept trimmed and without tabs or line breaks. */
export function url(value: string | undefined): Read<string> {
  const trimmed = value!.trim();
  return URL.canParse(trimmed) ? { value: trimmed.replace(/[\t\n\r]/g, '') } : { problems: ['Invalid URL'] };
}

export function pattern(regex: RegExp, message: string): Reader<string> {
  return (value) => (regex.test(value!) ? { value: value! } : { problems: [message] });
}

export interface IntegerOptions {
  min: number;
  max?: number;
  /** Custom messages (zod's `error` options); zod's own otherwise. */
  messages?: { type: string; integer: string; min: string; max: string };
}

/**
 * zod's `z.coerce.number().int().min(min).max(max)`: `Number(value)` must be finite, then whole (which
 * stops there), then safe and in range (each reported).
 */
export function integer({ min, max, messages }: IntegerOptions): Reader<number> {
  return (value) => {
    const number = Number(value);
    if (!Number.isFinite(number))
      return { problems: [messages?.type ?? `Invalid input: expected number, received ${String(number)}`] };
    if (!Number.isInteger(number))
      return { problems: [messages?.integer ?? 'Invalid input: expected int, received number'] };
    const problems: string[] = [];
    if (!Number.isSafeInteger(number)) {
      problems.push(
        messages?.integer ??
          (number > 0
            ? `Too big: expected int to be <=${Number.MAX_SAFE_INTEGER}`
            : `Too small: expected int to be >=${Number.MIN_SAFE_INTEGER}`),
      );
    }
    if (number < min) problems.push(messages?.min ?? `Too small: expected number to be >=${min}`);
    if (max !== undefined && number > max) problems.push(messages?.max ?? `Too big: expected number to be <=${max}`);
    return problems.length > 0 ? { problems } : { value: number };
  };
}
