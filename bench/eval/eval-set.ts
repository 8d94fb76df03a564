import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';

/** An evaluation set laid out as in ../shared/eval/README.md: `docs/`, `questions.jsonl`. */
export interface EvalSet {
  name: string;
  dir: string;
  docsDir: string;
  questionsFile: string;
}

/** One line of `questions.jsonl` (gold answers and doc ids stay with the scorer). */
export interface EvalQuestion {
  id: string;
  question: string;
}

/**
 * `nameOrPath` as a set: an existing folder, else a set name under `sharedEvalDir` (the team's
 * ../shared/eval). Fails with what is missing, so a typo names the folders it looked in.
 */
export function resolveEvalSet(nameOrPath: string, sharedEvalDir: string): EvalSet {
  const candidates = [resolve(nameOrPath), join(sharedEvalDir, nameOrPath)];
  const dir = candidates.find((candidate) => existsSync(candidate) && statSync(candidate).isDirectory());
  if (!dir)
    throw new Error(
      `eval set '${nameOrPath}' not found: neither ${candidates.join(' nor ')} is a folder (sets: docs/ and questions.jsonl, see ../shared/eval/README.md)`,
    );
  const docsDir = join(dir, 'docs');
  const questionsFile = join(dir, 'questions.jsonl');
  for (const path of [docsDir, questionsFile])
    if (!existsSync(path))
      throw new Error(`eval set ${dir} has no ${basename(path)} (a set needs docs/ and questions.jsonl)`);
  return { name: basename(dir), dir, docsDir, questionsFile };
}

/** The questions of a set, in file order; the first `limit` when given. */
export function readQuestions(file: string, limit?: number): EvalQuestion[] {
  const questions = readFileSync(file, 'utf8')
    .split('\n')
    .map((line, index) => ({ line: line.trim(), number: index + 1 }))
    .filter(({ line }) => line.length > 0)
    .map(({ line, number }) => {
      const row = JSON.parse(line) as { id?: unknown; question?: unknown };
      if (typeof row.question !== 'string' || (typeof row.id !== 'string' && typeof row.id !== 'number')) {
        throw new Error(`${file}:${number}: each line needs an "id" and a "question"`);
      }
      return { id: String(row.id), question: row.question };
    });
  return limit === undefined ? questions : questions.slice(0, limit);
}
