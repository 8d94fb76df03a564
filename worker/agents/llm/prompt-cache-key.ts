import { hash } from 'node:crypto';
import type { LanguageModelRequest } from '../../../shared/ports/language-model.js';

/**
 * The provider prompt cache key of a request that names none: a short hash of the model, the system
 * messages that open the prompt and the tools — the part batch questions share — so requests that share them
 * land on one provider cache (OpenAI routes by key and prefix) and their shared prefix is read at the cached
 * rate. Undefined when the request has neither a system message nor tools: then nothing long is shared.
 */
export function promptCacheKeyOf(
  modelId: string,
  request: Pick<LanguageModelRequest, 'messages' | 'tools'>,
): string | undefined {
  const opening = [];
  for (const message of request.messages) {
    if (message.role !== 'system') break;
    opening.push(message.content);
  }
  if (opening.length === 0 && !request.tools?.length) return undefined;
  // One-shot hash (no Hash object): this runs for every model call of a prompt with a system message or tools.
  return `agentq-${hash('sha256', JSON.stringify([modelId, opening, request.tools ?? []]), 'base64url').slice(0, 16)}`;
}
