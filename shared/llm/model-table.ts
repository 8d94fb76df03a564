/**
 * The `<model>:<value>:<value>,…` tables of the config (prices, rate limits, context windows). The
 * values are the last `:` fields, so model ids that contain `:` (Ollama's `llama3.2:3b`) work.
 * `parse(values)` returns the entry's value, or undefined when the entry is malformed.
 */
export function parseModelTable<T>(
  text: string,
  valueCount: number,
  parse: (values: string[]) => T | undefined,
  usage: string,
): { table: Record<string, T>; problems: string[] } {
  const table: Record<string, T> = {};
  const problems: string[] = [];
  for (const entry of text
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)) {
    const parts = entry.split(':');
    const values = parts.splice(Math.max(0, parts.length - valueCount)).map((value) => value.trim());
    const model = parts.join(':').trim();
    const value = model === '' || values.length < valueCount ? undefined : parse(values);
    if (value === undefined) problems.push(`entry '${entry}' must be ${usage}`);
    else table[model] = value;
  }
  return { table, problems };
}

/** A model's entry: its exact id, else its id without a date suffix (`gpt-4o-mini-2024-07-18` → `gpt-4o-mini`). */
export function modelEntry<T>(table: Readonly<Record<string, T>>, modelId: string): T | undefined {
  return table[modelId] ?? table[modelId.replace(/-\d{4}-\d{2}-\d{2}$|-\d{4}$/, '')];
}
