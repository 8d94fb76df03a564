/**
 * Whether a chat model's provider offers the flex tier (`service_tier: "flex"`): `on`/`off` as the operator
 * says (AGENTQ_FLEX); `auto` only for OpenAI's own API (api.openai.com), the one endpoint known to serve it.
 * The adapter reports it as its `tiers`, and a batch's plan may use flex only then.
 */
export function offersFlex(flex: 'auto' | 'on' | 'off', baseURL: string): boolean {
  if (flex !== 'auto') return flex === 'on';
  try {
    return new URL(baseURL).hostname === 'api.openai.com';
  } catch {
    return false;
  }
}
