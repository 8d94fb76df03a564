import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { AgentClient } from '../../producer/agent-client.js';
import { loadConfig } from '../../shared/config.js';
import { freePort } from '../../shared/redis/private-redis-server.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

function redisProcessesOn(port: number): string[] {
  const listing = spawnSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' }).stdout;
  return listing.split('\n').filter((line) => line.includes('redis-server') && line.includes(`:${port}`));
}

describe('agentq start (npm start) without REDIS_URL', () => {
  it('starts a private redis-server with AOF under the data dir, runs runs, and stops it on SIGTERM', async () => {
    const port = await freePort();
    const dataDir = mkdtempSync(join(tmpdir(), 'agentq-start-'));
    const env: NodeJS.ProcessEnv = { ...process.env, AGENTQ_LOCAL_REDIS_PORT: String(port), AGENTQ_DATA_DIR: dataDir, AGENTQ_LOG_LEVEL: 'error', PORT: '0' };
    delete env.REDIS_URL;
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/agentq.ts', 'start'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`start did not report running within 30 s: ${stderr}`)), 30_000);
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
          if (stderr.includes('agentq is running')) {
            clearTimeout(timer);
            resolve();
          }
        });
      });
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
});
