import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { AgentClient } from '../../producer/client/agent-client.js';
import { loadConfig } from '../../shared/config/config.js';
import { freePort, startPrivateRedis } from '../../shared/redis/private-redis-server.js';
import { describeBound, readinessBoundMs } from '../helpers/load-scale.js';
import { nodeEntry, repoRoot } from '../helpers/node-entry.js';
import { waitForReadiness } from '../helpers/process-readiness.js';
import { startTerminalSession } from '../helpers/terminal-session.js';

function redisProcessesOn(port: number): string[] {
  const listing = spawnSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' }).stdout;
  return listing.split('\n').filter((line) => line.includes('redis-server') && line.includes(`:${port}`));
}

describe('agentq start (npm start) without REDIS_URL', () => {
  it('starts a private redis-server with AOF under the data dir, runs runs, and stops it on SIGTERM', async () => {
    const port = await freePort();
    const dataDir = mkdtempSync(join(tmpdir(), 'agentq-start-'));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      AGENTQ_LOCAL_REDIS_PORT: String(port),
      AGENTQ_DATA_DIR: dataDir,
      AGENTQ_LOG_LEVEL: 'error',
      PORT: '0',
    };
    delete env.REDIS_URL;
    const child = spawn(process.execPath, [nodeEntry('bin/agentq.ts'), 'start'], {
      cwd: repoRoot,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await waitForReadiness(child, { what: 'agentq start', signal: /agentq is running/, on: 'stderr' });
      expect(stderr).toContain(`redis://127.0.0.1:${port}`);
      // The API and the dashboard run in the same process.
      const apiUrl = /api:\s+(http:\/\/\S+)\/v1\/runs/.exec(stderr)?.[1];
      expect(apiUrl, stderr).toBeTruthy();
      expect((await fetch(`${apiUrl}/healthz`)).status).toBe(200);
      expect(stderr).toContain(`${apiUrl}/admin/queues`);
      const redis = new Redis(`redis://127.0.0.1:${port}`);
      expect(await redis.config('GET', 'appendonly')).toEqual(['appendonly', 'yes']);
      expect(await redis.config('GET', 'dir')).toEqual(['dir', join(dataDir, 'redis')]);
      redis.disconnect();
      expect(redisProcessesOn(port)).toHaveLength(1);

      const client = new AgentClient({ config: loadConfig({ REDIS_URL: `redis://127.0.0.1:${port}` }) });
      const queued = await client.enqueue({ graph: 'chain', input: { steps: 2 } });
      expect((await client.wait(queued.id, { timeoutMs: 20_000 })).status).toBe('completed');
      await client.close();

      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(redisProcessesOn(port)).toEqual([]);
    } finally {
      child.kill('SIGKILL');
      for (const line of redisProcessesOn(port)) process.kill(Number(line.trim().split(' ')[0]), 'SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('one Ctrl-C in a terminal lets the active step finish, then stops the private Redis last, exit code 0, nothing left', async () => {
    const port = await freePort();
    const dataDir = mkdtempSync(join(tmpdir(), 'agentq-start-'));
    const graceMs = 15_000;
    // A real pseudo-terminal: Ctrl-C sends SIGINT to the whole foreground process group, redis-server included
    // unless it runs in a group of its own.
    const session = startTerminalSession({
      command: [process.execPath, nodeEntry('bin/agentq.ts'), 'start'],
      cwd: repoRoot,
      dir: dataDir,
      env: {
        AGENTQ_LOCAL_REDIS_PORT: String(port),
        AGENTQ_DATA_DIR: dataDir,
        AGENTQ_LOG_LEVEL: 'info',
        PORT: '0',
        AGENTQ_SHUTDOWN_GRACE_MS: String(graceMs),
      },
    });
    try {
      const boundMs = readinessBoundMs(30_000);
      const startedBy = Date.now() + boundMs;
      while (!session.stderr().includes('agentq is running')) {
        if (Date.now() > startedBy || session.exitCode() !== undefined)
          throw new Error(
            `agentq start in a terminal did not print 'agentq is running' on stderr within ${boundMs} ms = ${describeBound(30_000)} (exit code ${session.exitCode()}); its stderr:\n${session.stderr().slice(-2000)}`,
          );
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const client = new AgentClient({ config: loadConfig({ REDIS_URL: `redis://127.0.0.1:${port}` }) });
      // One step that is still running when Ctrl-C comes: its commit needs Redis after the signal.
      const queued = await client.enqueue({ graph: 'chain', input: { steps: 1, sleepMs: 2_000 } });
      const runningBy = Date.now() + 10_000;
      while ((await client.get(queued.id))?.status !== 'running' && Date.now() < runningBy)
        await new Promise((resolve) => setTimeout(resolve, 50));
      await client.close();

      const pressed = Date.now();
      session.sendKeys('C-c');
      while (session.exitCode() === undefined && Date.now() - pressed < graceMs + 10_000)
        await new Promise((resolve) => setTimeout(resolve, 100));
      const stoppedAfterMs = Date.now() - pressed;
      expect(session.exitCode(), session.stderr()).toBe(0);
      expect(stoppedAfterMs).toBeLessThan(graceMs + 5_000);
      expect(redisProcessesOn(port)).toEqual([]);
      expect(session.stderr()).not.toMatch(/ECONNREFUSED|Stream isn't writeable/);
      // Redis was stopped by us (SHUTDOWN), not by the terminal's SIGINT.
      const redisLog = readFileSync(join(dataDir, 'redis', 'redis.log'), 'utf8');
      expect(redisLog).not.toContain('Received SIGINT');
      expect(redisLog).toContain('User requested shutdown');

      // The step that was running at Ctrl-C committed: the run is completed in the AOF left behind.
      const reopened = await startPrivateRedis({ dir: join(dataDir, 'redis'), appendonly: true });
      try {
        const reader = new AgentClient({ config: loadConfig({ REDIS_URL: reopened.url }) });
        expect((await reader.get(queued.id))?.status).toBe('completed');
        await reader.close();
      } finally {
        await reopened.stop();
      }
    } finally {
      session.close();
      for (const line of redisProcessesOn(port)) process.kill(Number(line.trim().split(' ')[0]), 'SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
