import type { RunStatus } from '../contracts/run-record.js';
import { pairsToObject, parseMeta, parseStepMeta, type RunMeta, type StepMeta } from './run-meta.js';
import type { StateText } from './state-text.js';

export type BeginResult =
  | { kind: 'missing' }
  | { kind: 'skip' | 'stale' | 'written' | 'cancel'; status: RunStatus }
  | { kind: 'admit'; meta: RunMeta }
  | { kind: 'run'; meta: StepMeta; state: StateText | null; memos: Record<string, unknown> };

/** BEGIN's reply (on its own, or inside engine v2's transition and take scripts), parsed. */
export function parseBeginReply(reply: unknown[]): BeginResult {
  const kind = reply[0] as string;
  switch (kind) {
    case 'missing':
      return { kind: 'missing' };
    case 'admit':
      return { kind: 'admit', meta: parseMeta(pairsToObject(reply[2] as string[])) };
    case 'run':
      return parseRun(reply);
    default:
      return { kind: kind as 'skip' | 'stale' | 'written' | 'cancel', status: reply[1] as RunStatus };
  }
}

/** BEGIN's (and a starting ADMIT's) 'run' reply: meta fields as one JSON array, state as one JSON object (nil: cached), memos. */
export function parseRun(reply: unknown[]): Extract<BeginResult, { kind: 'run' }> {
  return {
    kind: 'run',
    meta: parseStepMeta(JSON.parse(reply[2] as string) as (string | false)[]),
    state: typeof reply[3] === 'string' ? { base: reply[3], changed: {} } : null,
    memos: typeof reply[4] === 'string' ? (JSON.parse(reply[4]) as Record<string, unknown>) : {},
  };
}
