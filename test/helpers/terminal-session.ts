import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A command running in a real pseudo-terminal (a private tmux server), so keys like Ctrl-C reach it the
 * way they reach a user's `npm start`: the terminal sends SIGINT to the whole foreground process group,
 * not to one pid. The command's stderr goes to `<dir>/stderr` and its exit code to `<dir>/exit-code`.
 */
export interface TerminalSession {
  /** What the command has written to stderr so far. */
  stderr(): string;
  /** The exit code once the command has ended, else undefined. */
  exitCode(): number | undefined;
  /** Sends keys as typed, e.g. `C-c`. */
  sendKeys(keys: string): void;
  /** Ends the tmux server (and whatever still runs in it). */
  close(): void;
}

function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

export function startTerminalSession({
  command,
  cwd,
  env,
  dir,
}: {
  command: string[];
  cwd: string;
  env: Record<string, string>;
  dir: string;
}): TerminalSession {
  const socket = `agentq-test-${process.pid}-${Date.now()}`;
  const exports = Object.entries(env).map(([name, value]) => `export ${name}=${shellQuote(value)};`);
  const unset = Object.keys(process.env).includes('REDIS_URL') && !('REDIS_URL' in env) ? 'unset REDIS_URL;' : '';
  // The shell traps (not ignores) SIGINT so it survives Ctrl-C to write the exit code; a trapped signal
  // is back to its default in the command it starts, so the command sees Ctrl-C as a user's would.
  const script = `trap true INT; ${unset} ${exports.join(' ')} cd ${shellQuote(cwd)}; ${command.map(shellQuote).join(' ')} 2>${shellQuote(join(dir, 'stderr'))}; echo $? > ${shellQuote(join(dir, 'exit-code'))}`;
  const started = spawnSync(
    'tmux',
    ['-L', socket, '-f', '/dev/null', 'new-session', '-d', '-x', '200', '-y', '50', 'sh', '-c', script],
    { encoding: 'utf8' },
  );
  if (started.status !== 0) throw new Error(`tmux new-session failed: ${started.stderr}`);
  const read = (file: string) => (existsSync(join(dir, file)) ? readFileSync(join(dir, file), 'utf8') : '');
  return {
    stderr: () => read('stderr'),
    exitCode: () => {
      const text = read('exit-code').trim();
      return text === '' ? undefined : Number(text);
    },
    sendKeys: (keys) => {
      spawnSync('tmux', ['-L', socket, 'send-keys', keys]);
    },
    close: () => {
      spawnSync('tmux', ['-L', socket, 'kill-server'], { stdio: 'ignore' });
    },
  };
}
