import { AgentqError } from '../../shared/contracts/errors.js';

/**
 * The questions of a JSON Lines file, one `{"id"?, "question"}` object per line (`query` is taken for
 * `question`; other keys, such as an eval file's expected answer, are ignored). The CLI's
 * `agentq batch FILE` and the HTTP JSONL upload read files through this one function, so a file that
 * one accepts the other accepts too. Blank lines are skipped; a bad line is INVALID_INPUT naming it.
 */
export function parseQuestionLines(text: string): { id?: string; question: string }[] {
  const questions: { id?: string; question: string }[] = [];
  for (const [index, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (!line) continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new AgentqError(
        'INVALID_INPUT',
        `line ${index + 1} is not JSON; each line must be {"id"?: "…", "question": "…"}`,
      );
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new AgentqError(
        'INVALID_INPUT',
        `line ${index + 1} is not a JSON object; each line must be {"id"?: "…", "question": "…"}`,
      );
    const record = value as { id?: unknown; question?: unknown; query?: unknown };
    const question =
      typeof record.question === 'string'
        ? record.question
        : typeof record.query === 'string'
          ? record.query
          : undefined;
    if (!question) throw new AgentqError('INVALID_INPUT', `line ${index + 1} has no "question" string`);
    questions.push({ ...(record.id === undefined || record.id === null ? {} : { id: String(record.id) }), question });
  }
  return questions;
}
