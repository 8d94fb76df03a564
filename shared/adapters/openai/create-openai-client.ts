import OpenAI from 'openai';

/** Error responses' bodies, by the Headers object the SDK hands to its APIError (see errorBodyOf). */
const errorBodies = new WeakMap<Headers, string>();

/**
 * The body of the error response an SDK error came from, when the SDK dropped it: the SDK keeps only a
 * JSON body's `error` member, so a 406 answered `{"title": …, "detail": …}` (as a validating server
 * does) reaches us as "(no body)". Only for clients made by createOpenAIClient.
 */
export function errorBodyOf(headers: Headers | undefined): string | undefined {
  return headers ? errorBodies.get(headers) : undefined;
}

/** fetch that reads an error response's body once and hands the SDK an equal response, the body kept aside. */
async function fetchKeepingErrorBodies(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const response = await fetch(input, init);
  if (response.status < 400) return response;
  const text = await response.text().catch(() => '');
  const kept = new Response(text, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
  errorBodies.set(kept.headers, text);
  return kept;
}

/**
 * An openai SDK client for agentq's adapters: every option the SDK would otherwise read from process.env
 * is given (the config is the only env reader), and its own retries are off (the step's
 * retry policy counts attempts, so retries are counted in one place).
 */
export function createOpenAIClient({
  baseURL,
  apiKey,
  timeoutMs,
}: {
  baseURL: string;
  apiKey: string | undefined;
  timeoutMs: number;
}): OpenAI {
  return new OpenAI({
    baseURL,
    // The SDK refuses to start without a key; local servers ignore the placeholder.
    apiKey: apiKey ?? 'unused',
    organization: null,
    project: null,
    webhookSecret: null,
    maxRetries: 0,
    timeout: timeoutMs,
    logLevel: 'warn',
    fetch: fetchKeepingErrorBodies,
  });
}
