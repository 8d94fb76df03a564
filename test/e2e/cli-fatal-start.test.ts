import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliEnv } from '../helpers/run-cli.js';
import { loadScaledMs } from '../helpers/load-scale.js';
import { nodeEntry, repoRoot } from '../helpers/node-entry.js';
import { testConfig } from '../helpers/test-env.js';

interface Ended {
  code: number | null;
  /** True when it had not exited by the bound and was SIGKILLed: what a process that never ends does. */
  killed: boolean;
  stderr: string;
}

/** Runs `node <entry> <args>` and resolves once it exits, or SIGKILLs it past a generous, load-scaled bound. */
function runUntilExit(entry: string, args: string[], env: Record<string, string>): Promise<Ended> {
  const child = spawn(process.execPath, [entry, ...args], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), loadScaledMs(60_000));
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, killed: signal === 'SIGKILL', stderr });
    });
  });
}

/** The last line a process wrote on stderr. */
const lastLine = (text: string) => text.trim().split('\n').at(-1) ?? '';

/**
 * A command whose start fails ends: a non-zero exit and one line saying what failed, rather than a
 * process kept alive by what it had opened before the failure (Redis connections, the liveness thread,
 * queue workers, a worker beside an API that could not listen).
 */
describe('commands end on a fatal start error', () => {
  const config = testConfig();
  const env = cliEnv(config, { AGENTQ_LOG_LEVEL: 'silent', EMBED_PROVIDER: 'none' });
  const cleanups: (() => void)[] = [];
  afterAll(() => cleanups.forEach((cleanup) => cleanup()));

  it('agentq worker whose liveness thread module cannot be found exits 1 naming the module', async () => {
    // An install missing one file: a copy of dist/ (with the repository's packages) without the thread's module.
    const install = mkdtempSync(join(tmpdir(), 'agentq-install-'));
    cleanups.push(() => rmSync(install, { recursive: true, force: true }));
    cpSync(join(repoRoot, 'dist'), join(install, 'dist'), { recursive: true });
    cpSync(join(repoRoot, 'package.json'), join(install, 'package.json'));
    symlinkSync(join(repoRoot, 'node_modules'), join(install, 'node_modules'), 'dir');
    rmSync(join(install, 'dist', 'worker', 'runtime', 'liveness-beat.js'));
    // And its bundle, which the thread would run instead (scripts/bundle-worker.ts).
    rmSync(join(install, 'dist', 'worker', 'runtime', 'liveness-beat.bundle.js'), { force: true });

    const ended = await runUntilExit(join(install, 'dist', 'bin', 'agentq.js'), ['worker'], env);
    expect(ended.killed, `agentq worker never exited; its stderr:\n${ended.stderr}`).toBe(false);
    expect(ended.code).toBe(1);
    expect(lastLine(ended.stderr)).toMatch(/^agentq: Cannot find module '.*liveness-beat\.js'/);
  });

  it('agentq start whose API port is taken exits 1 naming the address, its worker stopped', async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => taken.close());
    const { port } = taken.address() as { port: number };

    const ended = await runUntilExit(nodeEntry('bin/agentq.ts'), ['start'], {
      ...env,
      HOST: '127.0.0.1',
      PORT: String(port),
    });
    expect(ended.killed, `agentq start never exited; its stderr:\n${ended.stderr}`).toBe(false);
    expect(ended.code).toBe(1);
    expect(lastLine(ended.stderr)).toBe(`agentq: listen EADDRINUSE: address already in use 127.0.0.1:${port}`);
  });
});
