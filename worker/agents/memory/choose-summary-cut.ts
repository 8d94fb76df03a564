import type { Message } from '../../../shared/contracts/run-record.js';

interface SummaryCutRequest {
  /** The stored history from `offset` on. */
  tail: readonly Message[];
  /** Absolute index of `tail[0]` (the memory's `upTo`). */
  offset: number;
  /** Tokens the kept messages may use. */
  keepTokens: number;
  /** Tokens of one message. */
  countTokens: (message: Message) => number;
}

/**
 * Where to cut the history for a summary: the absolute index of the first message kept verbatim, or
 * undefined when nothing can be summarised. Everything from `offset` (after the system prompt) up to
 * the cut is summarised.
 *
 * - Never cuts at a tool message, so an assistant message with tool calls stays with its results and the
 *   history stays valid.
 * - Keeps as many of the latest messages as fit in `keepTokens` (the latest turn, when it fits), and
 *   always at least the last message block, however large.
 */
export function chooseSummaryCut({ tail, offset, keepTokens, countTokens }: SummaryCutRequest): number | undefined {
  // The run's first message, its system prompt, is kept verbatim rather than summarised.
  const first = offset === 0 && tail[0]?.role === 'system' ? 1 : 0;
  let kept = 0;
  let cut: number | undefined;
  for (let position = tail.length - 1; position > first; position -= 1) {
    kept += countTokens(tail[position]!);
    if (tail[position]!.role === 'tool') continue;
    if (cut !== undefined && kept > keepTokens) break;
    cut = position;
  }
  return cut === undefined ? undefined : offset + cut;
}

/** The index of the latest user message of the history, or -1. */
export function latestUserIndex(tail: readonly Message[], offset: number): number {
  for (let position = tail.length - 1; position >= 0; position -= 1)
    if (tail[position]!.role === 'user') return offset + position;
  return -1;
}
