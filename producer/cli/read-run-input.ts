import { readFile } from 'node:fs/promises';
import { UsageError } from './usage-error.js';

function parseJson(source: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(
      `${source} is not valid JSON (${(error as Error).message}); give a JSON value, e.g. --input '{"steps": 3}'`,
    );
  }
}

async function readStdin(stdin: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The run input of `agentq run`: `--input '<json>'`, `--input -` (JSON on stdin) or `--input-file FILE`
 * (a big input overflows the argument list: "Argument list too long"). Exactly one of them.
 */
export async function readRunInput(
  { input, inputFile }: { input?: string | undefined; inputFile?: string | undefined },
  stdin: NodeJS.ReadableStream = process.stdin,
): Promise<unknown> {
  if (input !== undefined && inputFile !== undefined)
    throw new UsageError('give the input once: --input <json>, --input - (stdin) or --input-file <file>, not both');
  if (inputFile !== undefined) {
    let text: string;
    try {
      text = await readFile(inputFile, 'utf8');
    } catch (error) {
      throw new UsageError(`--input-file ${inputFile} cannot be read (${(error as Error).message})`);
    }
    return parseJson(`--input-file ${inputFile}`, text);
  }
  if (input === undefined)
    throw new UsageError("the run needs an input: --input '<json>', --input - (JSON on stdin) or --input-file <file>");
  if (input === '-') return parseJson('--input - (stdin)', await readStdin(stdin));
  return parseJson('--input', input);
}
