import { readdir, stat } from 'node:fs/promises';
import { join, normalize, resolve, sep } from 'node:path';
import { AgentqError } from '../../shared/contracts/errors.js';

/**
 * Files and directories → the files to ingest, in a stable order: directories are walked recursively,
 * skipping hidden entries (`.git`, `.DS_Store`) and `node_modules`. Paths are made absolute (with `/`
 * separators): a document's id and its stored `path` derive from it, so the same file is the same
 * document whichever directory the command ran in, and a citation's path can be opened from anywhere.
 */
export async function collectFiles(paths: readonly string[]): Promise<string[]> {
  const files: string[] = [];
  const walk = async (directory: string) => {
    const entries = (await readdir(directory, { withFileTypes: true })).sort((left, right) =>
      left.name.localeCompare(right.name),
    );
    for (const entry of entries) {
      if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
      const path = join(directory, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile()) files.push(path);
    }
  };
  for (const given of paths) {
    const path = resolve(given);
    const info = await stat(path).catch(() => null);
    if (!info)
      throw new AgentqError(
        'INVALID_INPUT',
        `${given} does not exist (looked for ${path}); name files or directories to ingest`,
      );
    if (info.isDirectory()) await walk(path);
    else files.push(path);
  }
  return [...new Set(files.map((file) => normalize(file).split(sep).join('/')))];
}
