/**
 * A private restate-server (the binary the @restatedev/restate-server npm package ships) on free
 * loopback ports in a temporary folder, with its defaults for durability: a single node whose log
 * server writes each record to RocksDB's WAL with fsync on (`rocksdb-disable-wal-fsync = false`).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../../shared/redis/private-redis-server.js';
import { restateServerBinary } from './scratch.js';

export interface PrivateRestate {
  readonly ingressUrl: string;
  readonly pid: number;
  /** Registers (again) the service endpoint at `uri` with the server. */
  register(uri: string): Promise<void>;
  stop(): Promise<void>;
}

export async function startPrivateRestate(): Promise<PrivateRestate> {
  const dir = mkdtempSync(join(tmpdir(), 'agentq-bench-restate-'));
  const [fabric, ingress, admin] = [await freePort(), await freePort(), await freePort()];
  const child = spawn(restateServerBinary(), ['--base-dir', join(dir, 'data'), '--no-logo'], {
    stdio: 'ignore',
    env: {
      ...process.env,
      RESTATE_LISTEN_MODE: 'tcp',
      RESTATE_BIND_PORT: String(fabric),
      RESTATE_INGRESS__BIND_PORT: String(ingress),
      RESTATE_ADMIN__BIND_PORT: String(admin),
      RESTATE_DISABLE_TELEMETRY: 'true',
      RESTATE_ROCKSDB_TOTAL_MEMORY_SIZE: '512MiB',
      RESTATE_LOG_FILTER: 'error',
    },
  });
  const adminUrl = `http://127.0.0.1:${admin}`;
  const ingressUrl = `http://127.0.0.1:${ingress}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const up = await Promise.all([
      fetch(`${adminUrl}/health`).then(
        (response) => response.ok,
        () => false,
      ),
      fetch(`${ingressUrl}/restate/health`).then(
        (response) => response.ok,
        () => false,
      ),
    ]);
    if (up.every(Boolean)) break;
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`BENCH_RESTATE: did not start in ${dir}`);
    await sleep(200);
  }
  return {
    ingressUrl,
    pid: child.pid!,
    async register(uri) {
      const response = await fetch(`${adminUrl}/deployments`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ uri, force: true }),
      });
      if (!response.ok) throw new Error(`BENCH_RESTATE_REGISTER: ${response.status} ${await response.text()}`);
    },
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(10_000)]);
      if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
