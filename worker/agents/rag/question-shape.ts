/**
 * What kind of answer a question wants, read from its wording alone:
 * - `yes-no`: "Are both A and B American?" (`pair` holds A and B when the question names two things);
 * - `comparison`: "Which is older, A or B?" — one of two named options, picked by a criterion;
 * - `numeric`: "How many …", "What percentage …", "In what year …" — a number (with its unit) or a year;
 * - `open`: anything else.
 */
export type QuestionShape =
  | { kind: 'yes-no'; pair: readonly [string, string] | null; property: string }
  | { kind: 'comparison'; options: readonly [string, string]; criterion: ComparisonCriterion }
  | { kind: 'numeric'; wants: 'year' | 'number' }
  | { kind: 'open' };

/** `earliest`/`latest`: by the first year the option's passage gives; `most`/`least`: by its first number; `unknown`: the better-supported option. */
export type ComparisonCriterion = 'earliest' | 'latest' | 'most' | 'least' | 'unknown';

const AUXILIARY = /^(?:is|are|was|were|do|does|did|can|could|has|have|had|will|would|should)\b/i;
const EARLIEST = /\b(?:older|oldest|earlier|earliest|first|before|sooner|predates?)\b/i;
const LATEST = /\b(?:younger|youngest|later|latest|newer|newest|more recent(?:ly)?|last|after)\b/i;
const MOST =
  /\b(?:larger|largest|bigger|biggest|more|most|higher|highest|taller|tallest|longer|longest|greater|greatest|heavier|wider|deeper)\b/i;
const LEAST = /\b(?:smaller|smallest|fewer|fewest|less|least|lower|lowest|shorter|shortest|lighter|narrower)\b/i;

const clean = (option: string) =>
  option
    .replace(/^(?:the\s+)?/i, '')
    .replace(/[\s"'“”]+$|^["'“”\s]+/g, '')
    .trim();

export function questionShape(question: string): QuestionShape {
  const text = question.trim().replace(/\s+/g, ' ');
  const comparison = comparisonOf(text);
  if (comparison) return comparison;
  if (AUXILIARY.test(text)) {
    const pair = pairOf(text);
    if (pair) return { kind: 'yes-no', ...pair };
    return { kind: 'yes-no', pair: null, property: text.replace(AUXILIARY, '').replace(/\?$/, '').trim() };
  }
  if (/^(?:in |during )?(?:what|which) year\b|^when\b|\bwhat year\b/i.test(text))
    return { kind: 'numeric', wants: 'year' };
  if (
    /^(?:how (?:many|much|long|old|far|tall|big|large|high|deep|wide|often)|what (?:percentage|percent|proportion|share|number|amount|fraction|population)|what was the (?:total |net )?(?:amount|number|revenue|cost|price|value|population|size))\b/i.test(
      text,
    )
  ) {
    return { kind: 'numeric', wants: 'number' };
  }
  return { kind: 'open' };
}

/** "Which is older, A or B?", "Who was born first: A or B?", "Which band formed earlier, A or the B?" */
function comparisonOf(text: string): QuestionShape | null {
  if (!/^(?:which|who|what|whose)\b/i.test(text) && !AUXILIARY.test(text)) return null;
  const tail = /[,:]\s*([^,:?]+?)\s+or\s+([^,:?]+?)\s*\??$/.exec(text);
  if (!tail) return null;
  const options: [string, string] = [clean(tail[1]!), clean(tail[2]!)];
  if (!options[0] || !options[1] || options[0].split(' ').length > 8 || options[1].split(' ').length > 8) return null;
  const head = text.slice(0, tail.index);
  const criterion: ComparisonCriterion = EARLIEST.test(head)
    ? 'earliest'
    : LATEST.test(head)
      ? 'latest'
      : MOST.test(head)
        ? 'most'
        : LEAST.test(head)
          ? 'least'
          : 'unknown';
  return { kind: 'comparison', options, criterion };
}

/**
 * "Are both Ed Wood and Scott Derrickson American?" → the pair and the property. The second name is
 * the run of capitalised words after "and" (joiners such as "of" allowed inside), since the property
 * that follows is usually lower-case or a single adjective.
 */
function pairOf(text: string): { pair: readonly [string, string]; property: string } | null {
  const match = /^\w+\s+(?:both\s+)?(.+?)\s+and\s+(.+?)\??$/i.exec(text);
  if (!match) return null;
  const words = match[2]!.split(' ');
  let end = 0;
  while (
    end < words.length - 1 &&
    (/^[\p{Lu}\p{N}"“]/u.test(words[end]!) ||
      (end > 0 &&
        /^(?:of|the|and|de|von|van|da|di|la|le|du)$/.test(words[end]!) &&
        /^[\p{Lu}]/u.test(words[end + 1] ?? '')))
  )
    end += 1;
  if (end === 0) end = 1;
  const first = clean(match[1]!);
  const second = clean(words.slice(0, end).join(' '));
  const property = words
    .slice(end)
    .join(' ')
    .replace(/^both\s+/i, '');
  if (!first || !second || first.length > 80 || second.length > 80) return null;
  return { pair: [first, second], property };
}
