import { channel, type Channel } from '../../../shared/graph/channels.js';
import type { Message } from '../../../shared/contracts/run-record.js';

/**
 * How a run's history is shown to the model once older messages were summarised. The history list
 * itself stays append-only and complete (the audit log `GET /v1/runs/:id/messages` serves); prompts
 * use `[system prompt + summary, pinned user message?, ...history from upTo]` instead (`promptView`).
 *
 * It is one state key (replace reducer), so a summary is committed with the step that made it, and a
 * node reads only the messages from `upTo` on: per-step cost stays flat however long the run grows.
 */
export interface MemoryState {
  /** Messages before this index are represented by the summary in prompts; 0 = nothing summarised. */
  upTo: number;
  /** What the summarised messages said. */
  summary: string | null;
  /** The run's system prompt (its first message), kept verbatim in front of the summary. */
  system: string | null;
  /** The latest user message when it lies before `upTo`: the current request is kept verbatim. */
  pinned: Message | null;
  /** History length at the last summary (-1: never): a prompt still too long is then sent as is. */
  summarizedAtLength: number;
}

/** The state key graphs keep their `MemoryState` under; the intake seeds it for conversations. */
export const MEMORY_STATE_KEY = 'memory';

/**
 * The state key a graph keeps its default memory mode under (react-agent's `memory: { keep }` option);
 * the intake reads it, else the run input's `memory.keep`, to seed a conversation's turn.
 */
const MEMORY_KEEP_STATE_KEY = 'memoryKeep';

/** What a new turn keeps of the earlier ones: the state's MEMORY_KEEP_STATE_KEY, else the input's `memory.keep`, else 'all'. */
export function memoryKeepOf(state: Readonly<Record<string, unknown>>, input: unknown): 'all' | 'answers' {
  const fromInput = (input as { memory?: { keep?: unknown } } | null)?.memory?.keep;
  const keep = state[MEMORY_KEEP_STATE_KEY] ?? fromInput;
  return keep === 'answers' ? 'answers' : 'all';
}

export function emptyMemory(): MemoryState {
  return { upTo: 0, summary: null, system: null, pinned: null, summarizedAtLength: -1 };
}

/** The channel of a graph's `memory` key. */
export function memoryChannel(): Channel<MemoryState, MemoryState> {
  return channel.replace<MemoryState>(emptyMemory);
}

/** A stored value as a `MemoryState` (older or foreign values count as nothing summarised). */
export function asMemoryState(value: unknown): MemoryState {
  if (typeof value !== 'object' || value === null) return emptyMemory();
  const memory = value as Partial<MemoryState>;
  return {
    upTo: typeof memory.upTo === 'number' && memory.upTo >= 0 ? memory.upTo : 0,
    summary: typeof memory.summary === 'string' ? memory.summary : null,
    system: typeof memory.system === 'string' ? memory.system : null,
    pinned: memory.pinned && typeof memory.pinned === 'object' ? memory.pinned : null,
    summarizedAtLength: typeof memory.summarizedAtLength === 'number' ? memory.summarizedAtLength : -1,
  };
}
