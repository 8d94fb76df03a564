import { describe, expect, it } from 'vitest';
import { passesLuhn, redactPii } from '../../worker/agents/guardrails/redact-pii.js';

describe('redactPii', () => {
  it('redacts emails, phone numbers and Luhn-valid card numbers', () => {
    const { text, found } = redactPii(
      'Mail ada@example.co.uk or call +44 20 7946 0958; card 4111 1111 1111 1111 expires soon.',
    );
    expect(text).toBe('Mail [EMAIL] or call [PHONE]; card [CARD_NUMBER] expires soon.');
    expect(found.sort()).toEqual(['card', 'email', 'phone']);
  });

  it('a 16-digit number failing the Luhn check is not a card number', () => {
    expect(passesLuhn('4111111111111111')).toBe(true);
    expect(passesLuhn('4111111111111112')).toBe(false);
    expect(redactPii('order 4111-1111-1111-1112').text).not.toContain('[CARD_NUMBER]');
  });

  it('leaves ordinary numbers, dates and prices alone', () => {
    const text = 'In 2024 revenue rose 12% to $4,500 on 2024-11-25; see section 3.2.';
    expect(redactPii(text)).toEqual({ text, found: [] });
  });
});
