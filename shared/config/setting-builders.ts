/**
 * The kinds of setting a declaration in shared/config/settings/ can be: each builder takes the one
 * declaration of an environment variable (name, default, bounds, one-line doc, when to change it) and
 * gives the reader the loader validates it with, the words its refusal and the reference page use for
 * what is allowed, and the default as the page shows it. Plain code without zod, so the CLI's light
 * readers (shared/config/redis-config.ts, search-config.ts) load nothing heavy (cold start).
 */

/** What a reader makes of a variable's value: the value, or the problems that refuse it. */
export type Read<T> = { value: T; problems?: undefined } | { value?: undefined; problems: string[] };

/** One environment variable, declared once. */
export interface Setting<T> {
  /** The environment variable's name. */
  readonly env: string;
  /** One line: what it does (the reference page's text). */
  readonly doc: string;
  /** When to change it from the default (the reference page's advice), if there is something to say. */
  readonly when?: string | undefined;
  /** The values allowed, as words that complete "must be …" (refusals and the reference page). */
  readonly allowed: string;
  /** The default as the reference page shows it (markdown). */
  readonly shownDefault: string;
  /** Its value is never repeated in a refusal (keys, passwords). */
  readonly secret?: boolean | undefined;
  /** Reads a present value (empty values are unset: they get `fallback`). */
  readonly read: (value: string) => Read<T>;
  /** The value when the variable is unset. */
  readonly fallback: () => T;
}

/** What every declaration gives. */
interface SettingDocs {
  env: string;
  doc: string;
  when?: string;
  secret?: boolean;
}

/** A setting's value type: `T` with a default, `T | undefined` without one. */
type Defaulted<T, D> = [D] extends [undefined] ? T | undefined : T;

/** `value` quoted for a refusal, a URL's user and password masked. */
export function quoteValue(value: string): string {
  return JSON.stringify(value.replace(/\/\/[^/@\s]*@/, '//***@'));
}

/** The refusal of a basic setting: what is allowed and, unless it is secret, what was given (no markdown). */
function refuse<T>(allowed: string, value: string, secret: boolean | undefined): Read<T> {
  return { problems: [`must be ${allowed.replaceAll('`', '')}${secret ? '' : `, got ${quoteValue(value)}`}`] };
}

function code(value: string | number | boolean): string {
  return `\`${String(value)}\``;
}

function common<T>(
  options: SettingDocs & { default?: T | undefined; shownDefault?: string | undefined },
  allowed: string,
  read: (value: string) => Read<T>,
): Setting<T> {
  const fallback = options.default;
  return {
    env: options.env,
    doc: options.doc,
    when: options.when,
    secret: options.secret,
    allowed,
    shownDefault: options.shownDefault ?? (fallback === undefined ? 'unset' : code(fallback as string)),
    read,
    fallback: () => fallback as T,
  };
}

interface IntegerOptions<D> extends SettingDocs {
  min: number;
  max?: number;
  default?: D;
  /** Overrides the generated words for what is allowed. */
  allowed?: string;
  /** How the page shows the default, e.g. "`52428800` (50 MiB)". */
  shownDefault?: string;
}

/**
 * A whole number in [min, max], read as `Number(value)` reads it (so `1e3` and `0x10` are numbers, as
 * they were under zod's `z.coerce.number().int()`); unsafe integers are refused.
 */
export function integer<const D extends number | undefined = undefined>(
  options: IntegerOptions<D>,
): Setting<Defaulted<number, D>> {
  const { min, max } = options;
  const allowed =
    options.allowed ?? (max === undefined ? `a whole number ≥ ${min}` : `a whole number from ${min} to ${max}`);
  return common<Defaulted<number, D>>(options, allowed, (value) => {
    const number = Number(value);
    return Number.isSafeInteger(number) && number >= min && (max === undefined || number <= max)
      ? { value: number as Defaulted<number, D> }
      : refuse(allowed, value, options.secret);
  });
}

interface DecimalOptions extends SettingDocs {
  min: number;
  max: number;
  default: number;
}

/** A finite number in [min, max] (`Number(value)`). */
export function decimal(options: DecimalOptions): Setting<number> {
  const allowed = `a number from ${options.min} to ${options.max}`;
  return common(options, allowed, (value) => {
    const number = Number(value);
    return Number.isFinite(number) && number >= options.min && number <= options.max
      ? { value: number }
      : refuse(allowed, value, options.secret);
  });
}

const TRUE = ['true', '1', 'yes'];
const FALSE = ['false', '0', 'no'];

/** A switch: `true`/`false` (`1`/`0`, `yes`/`no` too). */
export function flag(options: SettingDocs & { default: boolean }): Setting<boolean> {
  const allowed = '`true` or `false` (or `1`/`0`, `yes`/`no`)';
  return common(options, allowed, (value) =>
    TRUE.includes(value) ? { value: true } : FALSE.includes(value) ? { value: false } : refuse(allowed, value, false),
  );
}

/** One of a few words. */
export function choice<const V extends string, const D extends V | undefined = undefined>(
  options: SettingDocs & { values: readonly V[]; default?: D; allowed?: string; shownDefault?: string },
): Setting<Defaulted<V, D>> {
  const allowed = options.allowed ?? `one of ${options.values.map((value) => code(value)).join(', ')}`;
  return common<Defaulted<V, D>>(options, allowed, (value) =>
    (options.values as readonly string[]).includes(value)
      ? { value: value as Defaulted<V, D> }
      : refuse(allowed, value, options.secret),
  );
}

/** Any text (an empty variable is unset). */
export function text<const D extends string | undefined = undefined>(
  options: SettingDocs & { default?: D; allowed?: string; shownDefault?: string },
): Setting<Defaulted<string, D>> {
  return common<Defaulted<string, D>>(options, options.allowed ?? 'any text', (value) => ({
    value: value as Defaulted<string, D>,
  }));
}

/** Text that matches `pattern`; `allowed` says what that means in words. */
export function matching<const D extends string | undefined = undefined>(
  options: SettingDocs & { pattern: RegExp; allowed: string; default?: D },
): Setting<Defaulted<string, D>> {
  return common<Defaulted<string, D>>(options, options.allowed, (value) =>
    options.pattern.test(value)
      ? { value: value as Defaulted<string, D> }
      : refuse(options.allowed, value, options.secret),
  );
}

/**
 * A URL: what `URL` parses once trimmed, kept trimmed and without tabs or line breaks (zod's
 * `z.string().url()`, which these variables were read with before).
 */
export function url(options: SettingDocs & { example: string; shownDefault?: string }): Setting<string | undefined> {
  const allowed = `a URL such as \`${options.example}\``;
  return common<string | undefined>(options, allowed, (value) => {
    const trimmed = value.trim();
    return URL.canParse(trimmed) ? { value: trimmed.replace(/[\t\n\r]/g, '') } : refuse(allowed, value, options.secret);
  });
}

/**
 * A value with a grammar of its own (a table, JSON, a list): `read` returns the value or problems that
 * already say what was wrong and name the offending entry. `default` is the text an unset variable
 * stands for, read like any other.
 */
export function parsed<T>(
  options: SettingDocs & {
    default: string;
    allowed: string;
    read: (value: string) => Read<T>;
    shownDefault?: string;
  },
): Setting<T>;
export function parsed<T>(
  options: SettingDocs & { allowed: string; read: (value: string) => Read<T>; shownDefault?: string },
): Setting<T | undefined>;
export function parsed<T>(
  options: SettingDocs & { default?: string; allowed: string; read: (value: string) => Read<T>; shownDefault?: string },
): Setting<T | undefined> {
  const fallbackText = options.default;
  return {
    env: options.env,
    doc: options.doc,
    when: options.when,
    secret: options.secret,
    allowed: options.allowed,
    shownDefault:
      options.shownDefault ??
      (fallbackText === undefined ? 'unset' : fallbackText === '' ? 'empty' : code(fallbackText)),
    read: options.read,
    fallback: () => {
      if (fallbackText === undefined) return undefined;
      const read = options.read(fallbackText);
      if (read.problems) throw new Error(`${options.env}'s default does not read: ${read.problems.join('; ')}`);
      return read.value;
    },
  };
}

/** A table of `parse(text)` → `{ table, problems }` (AGENTQ_PRICES and the like) as a reader. */
export function tableReader<T>(parse: (text: string) => { table: T; problems: string[] }): (value: string) => Read<T> {
  return (value) => {
    const { table, problems } = parse(value);
    return problems.length > 0 ? { problems } : { value: table };
  };
}
