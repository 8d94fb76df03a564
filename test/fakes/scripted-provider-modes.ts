/**
 * The provider modes the scripted OpenAI server can play beside its script (scripted-openai-server.ts
 * plugs them in): the flex tier (`service_tier: "flex"`: slower, refused under load) and the prompt cache
 * (`usage.prompt_tokens_details.cached_tokens` for a prefix seen recently). The Batch API's delays are
 * `batchApi.validatingMs` / `processingMs` (scripted-batch-api.ts).
 */
import type { ChatCompletionCreateParams } from 'openai/resources/chat/completions';
import { promptText } from './scripted-chat-completion.js';

/** How flex requests (`service_tier: "flex"`) are answered. Without it they are answered like any other. */
export interface ScriptedFlexOptions {
  /** Added before a flex request is answered (after the scripted delay), in ms. @default 0 */
  extraDelayMs?: number;
  /**
   * Refuse every k-th flex request (the k-th, 2k-th, … counted from 1) with OpenAI's 429 for flex
   * capacity; 1 refuses all. Deterministic, so a test knows which call was refused. @default never
   */
  refuseEvery?: number;
  /** Or decide per flex request (its 0-based flex index); wins over `refuseEvery`. */
  refuse?: (flexIndex: number) => boolean;
}

/** How the prompt cache reports cached input tokens. Off unless given. */
export interface ScriptedPromptCacheOptions {
  /** How long a prompt's prefix stays cached after it was last sent, in ms. @default 300000 (OpenAI: 5 to 10 minutes idle) */
  ttlMs?: number;
  /** The shortest shared prefix that is cached at all, in tokens. @default 1024 (OpenAI's) */
  minTokens?: number;
  /** Cached tokens are counted in steps of this many. @default 128 (OpenAI's) */
  stepTokens?: number;
}

/** The 429 OpenAI answers a flex request it has no capacity for (the caller is not charged). */
export const FLEX_UNAVAILABLE_BODY = {
  error: {
    message:
      'Resource unavailable: there is not enough capacity to serve this request on the flex service tier right now. Please retry later, or send it without service_tier: flex.',
    type: 'rate_limit_error',
    param: null,
    code: 'resource_unavailable',
  },
} as const;

/** The modes of one server: its flex counter and its cache of recent prompts. */
export interface ProviderModes {
  /**
   * What a chat request meets before its script answers: a flex refusal (429 body) or an extra delay.
   * Counts the request as a flex one when it is.
   */
  beforeAnswer(body: ChatCompletionCreateParams): { refuse: true } | { refuse: false; extraDelayMs: number };
  /** A completion body with the modes' marks: `service_tier` echoed, cached tokens in its usage. */
  mark(completion: unknown, body: ChatCompletionCreateParams): unknown;
  /** Forget the flex count and the cache (server reset). */
  reset(): void;
}

export function createProviderModes(
  flex: ScriptedFlexOptions | undefined,
  promptCache: ScriptedPromptCacheOptions | undefined,
  now: () => number = Date.now,
): ProviderModes {
  let flexCount = 0;
  // Recent prompts by cache key ('' when the request names none), each with when it was last sent.
  const cache = new Map<string, Map<string, number>>();

  function cachedTokens(body: ChatCompletionCreateParams, promptTokens: number): number {
    if (!promptCache) return 0;
    const { ttlMs = 300_000, minTokens = 1024, stepTokens = 128 } = promptCache;
    const key = (body as { prompt_cache_key?: string }).prompt_cache_key ?? '';
    const text = prefixText(body);
    const seen = cache.get(key) ?? new Map<string, number>();
    cache.set(key, seen);
    const at = now();
    let longest = 0;
    for (const [earlier, sentAt] of seen) {
      if (at - sentAt > ttlMs) seen.delete(earlier);
      else longest = Math.max(longest, commonPrefixLength(earlier, text));
    }
    seen.set(text, at);
    const tokens = Math.min(Math.floor(longest / 4), promptTokens);
    return tokens < minTokens ? 0 : Math.floor(tokens / stepTokens) * stepTokens;
  }

  return {
    beforeAnswer(body) {
      if (!isFlex(body) || !flex) return { refuse: false, extraDelayMs: 0 };
      const index = flexCount++;
      const refused = flex.refuse
        ? flex.refuse(index)
        : flex.refuseEvery !== undefined && (index + 1) % flex.refuseEvery === 0;
      return refused ? { refuse: true } : { refuse: false, extraDelayMs: flex.extraDelayMs ?? 0 };
    },
    mark(completion, body) {
      const marked = { ...(completion as Record<string, unknown>) };
      if (isFlex(body)) marked['service_tier'] = 'flex';
      const usage = marked['usage'] as { prompt_tokens: number } | undefined;
      if (usage && promptCache)
        marked['usage'] = {
          ...usage,
          prompt_tokens_details: { cached_tokens: cachedTokens(body, usage.prompt_tokens), audio_tokens: 0 },
        };
      return marked;
    },
    reset() {
      flexCount = 0;
      cache.clear();
    },
  };
}

function isFlex(body: ChatCompletionCreateParams): boolean {
  return (body as { service_tier?: string }).service_tier === 'flex';
}

/** What the provider caches, in its order: the tools first, then the messages. */
function prefixText(body: ChatCompletionCreateParams): string {
  return (body.tools ? JSON.stringify(body.tools) : '') + promptText(body);
}

function commonPrefixLength(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  let position = 0;
  while (position < length && a.charCodeAt(position) === b.charCodeAt(position)) position++;
  return position;
}
