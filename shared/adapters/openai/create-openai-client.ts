import OpenAI from 'openai';

/**
 * An openai SDK client for agentq's adapters: every option the SDK would otherwise read from process.env
 * is given (the config is the only env reader), and its own retries are off (DESIGN §7: the step's
 * retry policy counts attempts).
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
  });
}
