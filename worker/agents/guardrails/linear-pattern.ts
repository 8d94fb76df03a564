import { RE2JS } from 're2js';

/**
 * A regular expression compiled by RE2 (the `re2js` port): matching takes time linear in the text
 * whatever the pattern, so a pattern cannot freeze the worker's thread the way `^(a+)+$` does on
 * JavaScript's backtracking engine. RE2 has no backreferences and no lookahead; lookbehind only for
 * built-in patterns (`lookbehinds`), captureless.
 */
export type LinearPattern = RE2JS;

export { RE2JS as LinearPatternClass };

interface LinearPatternOptions {
  caseInsensitive?: boolean;
  /** RE2JS's linear-time captureless lookbehinds `(?<=…)`, `(?<!…)`. @default false */
  lookbehinds?: boolean;
}

/** Compiles an RE2 pattern (RE2 syntax, not JavaScript's: use it for patterns written here). */
export function compileLinear(source: string, options: LinearPatternOptions = {}): LinearPattern {
  return RE2JS.compile(
    source,
    (options.caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0) | (options.lookbehinds ? RE2JS.LOOKBEHINDS : 0),
  );
}

/**
 * A pattern from a request, written as a JavaScript regular expression source (`\u00e9`, `(?<name>…)`
 * are translated to RE2's spelling), compiled case-insensitive on RE2. Throws what `callerPatternProblem`
 * explains.
 */
export function compileCallerPattern(source: string): LinearPattern {
  return compileLinear(RE2JS.translateRegExp(source), { caseInsensitive: true });
}

/** A literal text as a pattern (a deny list's keyword). */
export function literalPattern(text: string): LinearPattern {
  return compileLinear(RE2JS.quote(text), { caseInsensitive: true });
}

/**
 * The constructs of a JavaScript pattern that need backtracking, which RE2 has not: backreferences and
 * lookaround, found outside escapes and character classes.
 */
function backtrackingConstructs(source: string): string[] {
  const found = new Set<string>();
  let inClass = false;
  for (let index = 0; index < source.length; index += 1) {
    const char = source[index];
    if (char === '\\') {
      const next = source[index + 1] ?? '';
      if (!inClass && /[1-9k]/.test(next)) found.add('backreferences (\\1, \\k<name>)');
      index += 1;
    } else if (char === '[') inClass = true;
    else if (char === ']') inClass = false;
    else if (!inClass && source.startsWith('(?<=', index)) found.add('lookbehind ((?<=…), (?<!…))');
    else if (!inClass && source.startsWith('(?<!', index)) found.add('lookbehind ((?<=…), (?<!…))');
    else if (!inClass && (source.startsWith('(?=', index) || source.startsWith('(?!', index)))
      found.add('lookahead ((?=…), (?!…))');
  }
  return [...found];
}

/**
 * Why a request's pattern cannot be used (undefined when it can). Patterns are JavaScript regular
 * expressions (checked as one with the `u` flag, compiled only, never run) that RE2 also accepts: RE2
 * matches in linear time, and the constructs it lacks are the ones that need backtracking.
 */
export function callerPatternProblem(source: string): string | undefined {
  const unsupported = backtrackingConstructs(source);
  if (unsupported.length > 0) {
    return `${unsupported.join(' and ')} not supported: patterns run on RE2, which matches in linear time and has no backtracking`;
  }
  try {
    new RegExp(source, 'u');
  } catch (error) {
    return `not a valid regular expression (${(error as Error).message})`;
  }
  try {
    compileCallerPattern(source);
    return undefined;
  } catch (error) {
    return `not supported by RE2, on which patterns run in linear time (${(error as Error).message})`;
  }
}

/**
 * Every match of `pattern` in `text` replaced by what `replace` returns for it, left to right. With
 * `group`, only that group is replaced and the next search starts at its end: a pattern that must see
 * the character after a match (RE2 has no lookahead) consumes it in the match but leaves it to the next.
 */
export function replaceMatches(
  pattern: LinearPattern,
  text: string,
  replace: (match: string) => string,
  { group = 0, between }: { group?: number; between?: () => void } = {},
): string {
  const matcher = pattern.matcher(text);
  let result = '';
  let last = 0;
  let from = 0;
  while (from <= text.length && matcher.find(from)) {
    const start = matcher.start(group);
    const end = matcher.end(group);
    result += text.slice(last, start) + replace(text.slice(start, end));
    last = end;
    // An empty match moves on by one, or the search would find it again.
    from = end > matcher.start(0) ? end : matcher.start(0) + 1;
    between?.();
  }
  return result + text.slice(last);
}
