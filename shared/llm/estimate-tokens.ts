import type { ToolDescription } from '../ports/language-model.js';
import { BoundedMemo } from '../contracts/bounded-memo.js';
import { contentImages, type Message } from '../contracts/run-record.js';

type CountTokens = (text: string) => number;
let loading: Promise<CountTokens> | undefined;

/**
 * gpt-tokenizer's o200k_base (the GPT-4o family's encoding), loaded on first use: most workers never
 * need an estimate (providers send usage), and the encoding takes ~0.2 s to load. It ships its ranks,
 * so it works offline. For other model families the count is an approximation, which is all a budget
 * check and a missing-usage fallback need.
 */
function tokenizer(): Promise<CountTokens> {
  loading ??= import('gpt-tokenizer/encoding/o200k_base').then((module) => (text: string) => module.countTokens(text));
  return loading;
}

/** Tokens each chat message costs beyond its text (role and separators), as OpenAI documents it. */
const PER_MESSAGE_TOKENS = 4;
/** The priming of the assistant's reply. */
const REPLY_PRIMING_TOKENS = 3;

/**
 * Counts of the paragraphs seen before. A prompt is mostly paragraphs other prompts had too: the system
 * prompt and tool schemas of every run of a graph, the passages a search shows (a batch's questions find
 * the same ones again and again), the earlier turns of a conversation. Counted paragraph by paragraph
 * (each ending at a blank line), a prompt costs a map lookup per known paragraph instead of a BPE pass
 * over all of it; the sum can differ from a count of the whole text by a token where two paragraphs
 * meet, well within what an estimate is for. Cleared when full, so memory stays bounded.
 */
const paragraphCounts = new BoundedMemo<string, number>({ limit: 8192 });

function countParagraphs(count: CountTokens, text: string): number {
  let total = 0;
  for (const paragraph of text.split(PARAGRAPH_END)) total += paragraphCounts.getOrSet(paragraph, count);
  return total;
}

/** After a blank line: the paragraph before keeps its newlines. */
const PARAGRAPH_END = /(?<=\n\n)/;

/** Loads the tokenizer now (a worker that will count prompts: ~0.2 s of blocked event loop at start, not under load). */
export async function loadTokenizer(): Promise<void> {
  await tokenizer();
}

/** Estimated tokens of a text. */
export async function estimateTextTokens(text: string): Promise<number> {
  if (text === '') return 0;
  return countParagraphs(await tokenizer(), text);
}

/** Estimated prompt tokens of a chat request: its messages and the tool schemas it offers. */
export async function estimatePromptTokens(
  messages: readonly Message[],
  tools: readonly ToolDescription[] = [],
): Promise<number> {
  const count = await tokenizer();
  let total = REPLY_PRIMING_TOKENS;
  for (const message of messages)
    total += PER_MESSAGE_TOKENS + countParagraphs(count, messageText(message)) + imageTokens(message);
  if (tools.length > 0) total += countParagraphs(count, JSON.stringify(tools));
  return total;
}

/** Estimated tokens of a response message (its text and tool calls). */
export async function estimateMessageTokens(message: Message): Promise<number> {
  return estimateTextTokens(messageText(message));
}

/**
 * Tokens an image part costs, as OpenAI documents it for its vision models: 85 at detail 'low'; at 'high'
 * (and 'auto', which picks high for most pictures) 85 plus 170 per 512-pixel tile, 765 for a 1024 × 1024
 * picture — the size the estimate assumes, since the picture itself is not opened here.
 */
export const IMAGE_TOKENS = { low: 85, high: 765 } as const;

function imageTokens(message: Message): number {
  return contentImages(message.content).reduce(
    (sum, image) => sum + (image.image_url.detail === 'low' ? IMAGE_TOKENS.low : IMAGE_TOKENS.high),
    0,
  );
}

function messageText(message: Message): string {
  // Content parts count by their text; images by imageTokens (a data: URL's bytes are not text the model reads).
  let text = Array.isArray(message.content)
    ? message.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n')
    : (message.content ?? '');
  for (const call of message.tool_calls ?? []) text += call.function.name + call.function.arguments;
  return text;
}
