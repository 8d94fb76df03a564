import { compileLinear, replaceMatches, type LinearPattern } from './linear-pattern.js';

/** What `redactPii` replaces each kind of personal data with. */
const PII_MARKERS = { email: '[EMAIL]', card: '[CARD_NUMBER]', phone: '[PHONE]' } as const;

type PiiKind = keyof typeof PII_MARKERS;

// On RE2 (linear-pattern.ts): on JavaScript's engine the email pattern alone takes seconds on a long
// text without an "@" (each start position scans to the end), and these run on every guarded text.
const EMAIL = compileLinear('[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\\.[A-Za-z0-9-]+)*\\.[A-Za-z]{2,}');
// 13-19 digits, optionally grouped by spaces or dashes; only a Luhn-valid run is a card number.
const CARD_CANDIDATE = compileLinear('\\b\\d(?:[ -]?\\d){12,18}\\b');
// An optional +country code, then digit groups with the usual separators (the digit count is checked
// after). Not after a word character or a dot, nor before one: RE2 has no lookahead, so the character
// after is matched outside group 1 and left to the next search.
const PHONE = compileLinear(
  '(?<![\\w.])(\\+?\\d{1,3}?[ .-]?(?:\\(\\d{1,4}\\)[ .-]?)?\\d{2,4}(?:[ .-]?\\d{2,4}){1,4})(?:$|[^\\w.])',
  { lookbehinds: true },
);

/** The patterns `redactPii` scans every text with, by kind: all compiled by the linear-time engine. */
export const PII_PATTERNS: Readonly<Record<PiiKind, LinearPattern>> = {
  email: EMAIL,
  card: CARD_CANDIDATE,
  phone: PHONE,
};

/** The Luhn checksum every payment card number satisfies (and most random digit runs do not). */
export function passesLuhn(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let index = digits.length - 1; index >= 0; index -= 1) {
    let digit = digits.charCodeAt(index) - 48;
    if (digit < 0 || digit > 9) return false;
    if (double) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
    double = !double;
  }
  return digits.length > 0 && sum % 10 === 0;
}

/**
 * The passes of `redactPii`, in order: each kind's pattern, the group that is the candidate (the phone
 * pattern also matches the character after), and what a candidate must be to count.
 */
const PASSES: readonly { kind: PiiKind; group?: number; accept(candidate: string): boolean }[] = [
  { kind: 'email', accept: () => true },
  { kind: 'card', accept: (candidate) => passesLuhn(candidate.replace(/[ -]/g, '')) },
  {
    kind: 'phone',
    group: 1,
    accept: (candidate) => {
      const digits = candidate.replace(/\D/g, '').length;
      // Without a +country code, fewer than 10 digits is more often a date, an id or an amount than a phone.
      return digits <= 15 && digits >= (candidate.trimStart().startsWith('+') ? 7 : 10);
    },
  },
];

/**
 * Replaces email addresses, payment card numbers (Luhn-checked, so an order number is left alone) and
 * phone numbers with markers; returns the text and what was found. Cards go before phones: a card
 * number also looks like a long phone number. `between` is called after each match (a deadline check).
 */
export function redactPii(text: string, between: () => void = () => undefined): { text: string; found: PiiKind[] } {
  const found = new Set<PiiKind>();
  let result = text;
  for (const { kind, group, accept } of PASSES) {
    const replace = (candidate: string) => {
      if (!accept(candidate)) return candidate;
      found.add(kind);
      return PII_MARKERS[kind];
    };
    result = replaceMatches(PII_PATTERNS[kind], result, replace, { group, between });
  }
  return { text: result, found: [...found] };
}
