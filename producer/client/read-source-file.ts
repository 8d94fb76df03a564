import { readFile, stat } from 'node:fs/promises';

/**
 * A file named for ingest, or why it cannot be: over `maxBytes` (AGENTQ_INGEST_MAX_BYTES, checked
 * before reading it) or unreadable. The error becomes that document's failure; the others go on.
 */
export async function readSourceFile(
  path: string,
  maxBytes: number,
): Promise<{ content: Uint8Array } | { error: { code: string; message: string } }> {
  try {
    const { size } = await stat(path);
    if (size > maxBytes)
      return {
        error: {
          code: 'INVALID_INPUT',
          message: `${path} is ${size} bytes, over the limit of ${maxBytes} (AGENTQ_INGEST_MAX_BYTES)`,
        },
      };
    return { content: await readFile(path) };
  } catch (error) {
    return { error: { code: 'INVALID_INPUT', message: `${path} cannot be read (${(error as Error).message})` } };
  }
}
