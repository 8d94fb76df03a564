import type { ErrorRecord } from './errors.js';

export const RUN_STATUSES = ['queued', 'running', 'waiting', 'cancelling', 'completed', 'failed', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const TERMINAL_STATUSES: readonly RunStatus[] = ['completed', 'failed', 'cancelled'];

export function isTerminal(status: RunStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}

/** The run record: what `agentq status --json` prints and `GET /v1/runs/:id` serves. */
export interface RunRecord {
  id: string;
  tenant: string;
  status: RunStatus;
  graph: string;
  graphVersion: string | null;
  stepCount: number;
  output: unknown;
  error: ErrorRecord | null;
  /** While `waiting`: the node that interrupted the run and what it asks for; otherwise null. */
  interrupt: PendingInterrupt | null;
  /** Tokens and estimated cost of the model calls made so far (from each response's usage). */
  usage: Usage;
  /** The schedule whose tick started the run (absent for runs enqueued directly). */
  scheduleId?: string;
  /** The concurrency key the run is held to and its limit (its own, or its graph's once taken in). */
  concurrency?: { key: string; limit: number };
  /** A fork's original run and the step it started from (absent for other runs). */
  forkOf?: { runId: string; step: number; patched?: string[] };
  /** A replay's original run; `live`: it goes on with live calls after a divergence. */
  replayOf?: { runId: string; live: boolean };
  /** A retried run's earlier attempts: how many, and the last one's error and end. */
  retryOf?: { attempts: number; error: ErrorRecord | null; failedAt: number | null };
  /** A child run's parent: the run whose step started it (`context.runGraph`), and that step's id. */
  parentRunId?: string;
  parentStep?: string;
  /** A run answered from its tenant's answer cache (a rag-agent's `answer_cache`): the run whose answer it returned, and when that was stored. */
  cached?: { from: string; at: string };
  /** When a finished run finished. */
  finishedAt?: string;
  createdAt: string;
  updatedAt: string;
}

/** One child run of a parent, as `GET /v1/runs/:id/children` lists it. */
export interface ChildRunLink {
  runId: string;
  graph: string;
  /** The parent's step that started it. */
  step: string;
  /** Whether that step waits for it (cancelling the parent cancels it while it runs). */
  wait: boolean;
  /** When the parent's step asked for it (ISO 8601). */
  createdAt: string;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  /** The part of `inputTokens` the provider read from its prompt cache (priced at its cached rate). @default 0 */
  cachedInputTokens?: number;
  /**
   * What the same calls would have cost with every input token at the full input rate, each in the mode it
   * was answered in (live, flex, provider batch): beside `costUsd`, the prompt cache's saving. @default 0 (no priced call)
   */
  uncachedCostUsd?: number;
}

/** A step's model usage: tokens and cost, the model that answered, and its last response's finish reason. */
export type StepUsage = Usage & {
  model?: string;
  /** `stop`, `length`, `tool_calls`, `content_filter`, `refusal` or `other` (the model port's FinishReason). */
  finishReason?: string;
};

export interface PendingInterrupt {
  node: string;
  stepId: string;
  request: unknown;
  /**
   * When the node asked for one (`interrupt(request, { callback })`): a signed URL that answers the
   * interrupt without an API key (`POST` the resume body `{ "value": … }`), once. @default absent
   */
  callbackUrl?: string;
  /** ISO 8601: the callback URL answers CALLBACK_EXPIRED from then on (the API's resume still works). @default absent */
  callbackExpiresAt?: string;
}

/** One committed node execution (`agentq steps --json`). */
export interface StepRecord {
  /** 0, 1, 2, … over the run, in commit order. */
  index: number;
  superstep: number;
  task: number;
  node: string;
  /** The attempt on which it succeeded (1 = first try). */
  attempts: number;
  startedAt: string;
  endedAt: string;
  /** Model usage of this step, when it called a model (which model answered, and why its last response ended). */
  usage?: StepUsage;
  /** A fork's step that ran in another run, before the fork point: that run's id (same index there). */
  inheritedFrom?: string;
}

export const EVENT_TYPES = [
  'run-start',
  'step-start',
  'step-end',
  'step-retry',
  'step-deferred',
  // A step waits without a worker (a model call in a provider batch): `data.waitingOn` says on what.
  'step-parked',
  'run-retry',
  'run-resume',
  'run-fork',
  'tool-call',
  'tool-result',
  'guardrail-pass',
  'guardrail-block',
  'guardrail-retry',
  'run-waiting',
  'run-end',
] as const;
export type RunEventType = (typeof EVENT_TYPES)[number];

export interface RunEvent {
  /** The Redis Stream id; pass it back to resume after it. */
  id: string;
  type: RunEventType;
  data: Record<string, unknown>;
}

/** One part of a user message's content (OpenAI's content-part format): text, or an image by URL. */
export type ContentPart =
  { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string; detail?: 'auto' | 'low' | 'high' } };

/** A chat message in a run's history (OpenAI chat-completions shape). */
export interface Message {
  role: 'system' | 'user' | 'assistant' | 'tool';
  /** Text; or, in a user message, content parts (text and images). */
  content: string | null | ContentPart[];
  name?: string;
  tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

/** The text of a message's content: its text parts joined, an image as `[image]` (content parts). */
export function contentText(content: Message['content']): string {
  if (content === null) return '';
  if (typeof content === 'string') return content;
  return content.map((part) => (part.type === 'text' ? part.text : '[image]')).join('\n');
}

/** The images of a message's content (none for text). */
export function contentImages(content: Message['content']): Extract<ContentPart, { type: 'image_url' }>[] {
  return Array.isArray(content)
    ? content.filter((part): part is Extract<ContentPart, { type: 'image_url' }> => part.type === 'image_url')
    : [];
}

/** A message whose content is text (what a model answers, and every message but a user's with images). */
export type TextMessage = Omit<Message, 'content'> & { content: string | null };
