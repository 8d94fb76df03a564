/**
 * The `/v1/moderations` answers of the scripted OpenAI-compatible server (scripted-openai-server.ts):
 * one result per input, flagged (category `harassment`) when it contains one of the flagged terms.
 */

const moderationCategories = [
  'hate',
  'hate/threatening',
  'harassment',
  'harassment/threatening',
  'illicit',
  'illicit/violent',
  'self-harm',
  'self-harm/intent',
  'self-harm/instructions',
  'sexual',
  'sexual/minors',
  'violence',
  'violence/graphic',
];

/** A `/v1/moderations` answer: one result per input, flagged when it contains a flagged term. */
export function moderation(body: unknown, flaggedTerms: readonly string[]): unknown {
  const { input, model } = (body ?? {}) as { input?: string | string[]; model?: string };
  const inputs = Array.isArray(input) ? input : [input ?? ''];
  const results = inputs.map((text) => {
    const flagged = flaggedTerms.some((term) => String(text).toLowerCase().includes(term.toLowerCase()));
    // Every category OpenAI reports, as its published contract requires; only harassment is ever flagged here.
    const each = <T>(value: (category: string) => T) =>
      Object.fromEntries(moderationCategories.map((category) => [category, value(category)]));
    return {
      flagged,
      categories: each((category) => category === 'harassment' && flagged),
      category_scores: each((category) => (category === 'harassment' && flagged ? 0.98 : 0.01)),
      category_applied_input_types: each(() => ['text']),
    };
  });
  return { id: 'modr-scripted', model: model ?? 'omni-moderation-latest', results };
}
