/** Context windows (tokens) by model id. */
export type ContextWindowTable = Readonly<Record<string, number>>;

/**
 * Parses `AGENTQ_CONTEXT_WINDOWS`: `<model>:<tokens>,…`, e.g. `gpt-4o-mini:128000,llama3.2:3b:131072`
 * (the number is the last `:` field). Returns the table, or the problems found.
 */
export function parseContextWindows(text: string): { table: ContextWindowTable; problems: string[] } {
  const table: Record<string, number> = {};
  const problems: string[] = [];
  for (const entry of text.split(',').map((item) => item.trim()).filter(Boolean)) {
    const colon = entry.lastIndexOf(':');
    const model = colon < 0 ? '' : entry.slice(0, colon).trim();
    const tokens = colon < 0 ? '' : entry.slice(colon + 1).trim();
    if (model === '' || !/^\d+$/.test(tokens) || Number(tokens) < 256) {
      problems.push(`entry '${entry}' must be <model>:<context window in tokens, at least 256>, e.g. gpt-4o-mini:128000`);
      continue;
    }
    table[model] = Number(tokens);
  }
  return { table, problems };
}

/** The context window of a model: its own entry (exact, else without a date suffix), else `fallback`. */
export function contextWindowOf(table: ContextWindowTable, modelId: string, fallback: number): number {
  return table[modelId] ?? table[modelId.replace(/-\d{4}-\d{2}-\d{2}$|-\d{4}$/, '')] ?? fallback;
}
