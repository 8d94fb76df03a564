/**
 * A private PostgreSQL for DBOS and LangGraph's checkpointer: Debian's server binaries (initdb, then
 * postgres on a free loopback port) in a temporary folder, with the server's defaults for
 * durability (fsync on, synchronous_commit on: each commit waits for its WAL flush). PostgreSQL
 * refuses to run as root, so as root it runs as the `postgres` user.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../../shared/redis/private-redis-server.js';

export const POSTGRES_BIN = process.env.BENCH_POSTGRES_BIN ?? '/usr/lib/postgresql/15/bin';

export interface PrivatePostgres {
  /** `postgres://postgres@127.0.0.1:<port>/` + a database name */
  url(database: string): string;
  /** The postmaster's pid (its backends are its children). */
  readonly pid: number;
  stop(): Promise<void>;
}

/** Why PostgreSQL cannot be started here, or undefined when it can. */
export function postgresMissing(): string | undefined {
  if (!existsSync(join(POSTGRES_BIN, 'initdb'))) return `no initdb in ${POSTGRES_BIN} (apt-get install postgresql)`;
  return undefined;
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'agentq-bench-pg-'));
  const asRoot = userInfo().uid === 0;
  const run = (binary: string, args: string[]) =>
    asRoot
      ? (['runuser', ['-u', 'postgres', '--', join(POSTGRES_BIN, binary), ...args]] as const)
      : ([join(POSTGRES_BIN, binary), args] as const);
  if (asRoot) {
    const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, id('-u'), id('-g'));
  }
  const data = join(dir, 'data');
  const [initdb, initArgs] = run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8']);
  execFileSync(initdb, initArgs, { stdio: 'ignore' });
  const port = await freePort();
  const [postgres, args] = run('postgres', [
    '-D',
    data,
    '-p',
    String(port),
    '-k',
    dir,
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'max_connections=300',
  ]);
  const child: ChildProcess = spawn(postgres, args, { stdio: 'ignore' });
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      execFileSync(join(POSTGRES_BIN, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
      break;
    } catch {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`BENCH_POSTGRES: did not start in ${dir}`);
      await sleep(100);
    }
  }
  const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  for (const database of ['dbos_bench', 'langgraph_bench'])
    execFileSync(join(POSTGRES_BIN, 'createdb'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', database]);
  return {
    url: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
    pid,
    async stop() {
      process.kill(pid, 'SIGINT'); // fast shutdown
      const until = Date.now() + 10_000;
      while (existsSync(join(data, 'postmaster.pid')) && Date.now() < until) await sleep(100);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
