/** What `redactPii` replaces each kind of personal data with. */
const PII_MARKERS = { email: '[EMAIL]', card: '[CARD_NUMBER]', phone: '[PHONE]' } as const;

type PiiKind = keyof typeof PII_MARKERS;

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g;
// 13-19 digits, optionally grouped by spaces or dashes; only a Luhn-valid run is a card number.
const CARD_CANDIDATE = /\b\d(?:[ -]?\d){12,18}\b/g;
// An optional +country code, then digit groups with the usual separators (the digit count is checked after).
const PHONE = /(?<![\w.])\+?\d{1,3}?[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{2,4}(?:[ .-]?\d{2,4}){1,4}(?![\w.])/g;

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
 * Replaces email addresses, payment card numbers (Luhn-checked, so an order number is left alone) and
 * phone numbers with markers; returns the text and what was found. Cards go before phones: a card
 * number also looks like a long phone number.
 */
export function redactPii(text: string): { text: string; found: PiiKind[] } {
  const found = new Set<PiiKind>();
  let result = text.replace(EMAIL, () => {
    found.add('email');
    return PII_MARKERS.email;
  });
  result = result.replace(CARD_CANDIDATE, (match) => {
    if (!passesLuhn(match.replace(/[ -]/g, ''))) return match;
    found.add('card');
    return PII_MARKERS.card;
  });
  result = result.replace(PHONE, (match) => {
    const digits = match.replace(/\D/g, '').length;
    // Without a +country code, fewer than 10 digits is more often a date, an id or an amount than a phone.
    if (digits > 15 || digits < (match.trimStart().startsWith('+') ? 7 : 10)) return match;
    found.add('phone');
    return PII_MARKERS.phone;
  });
  return { text: result, found: [...found] };
}
