import { modelEntry, parseModelTable } from './model-table.js';

/** Context windows (tokens) by model id. */
type ContextWindowTable = Readonly<Record<string, number>>;

/**
 * Parses `AGENTQ_CONTEXT_WINDOWS`: `<model>:<tokens>,…`, e.g. `gpt-4o-mini:128000,llama3.2:3b:131072`
 * (the number is the last `:` field). Returns the table, or the problems found.
 */
export function parseContextWindows(text: string): { table: ContextWindowTable; problems: string[] } {
  return parseModelTable(
    text,
    1,
    ([tokens = '']) => (/^\d+$/.test(tokens) && Number(tokens) >= 256 ? Number(tokens) : undefined),
    '<model>:<context window in tokens, at least 256>, e.g. gpt-4o-mini:128000',
  );
}

/** The context window of a model: its own entry (exact, else without a date suffix), else `fallback`. */
export function contextWindowOf(table: ContextWindowTable, modelId: string, fallback: number): number {
  return modelEntry(table, modelId) ?? fallback;
}
