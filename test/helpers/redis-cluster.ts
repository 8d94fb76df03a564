import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { loadConfig, type Config } from '../../shared/config/config.js';
import type { RedisClusterNode } from '../../shared/config/redis-cluster-nodes.js';
import { assertRedisReachable } from '../../shared/redis/assert-redis-reachable.js';

const run = promisify(execFile);

/** Why a cluster cannot be started here (redis-server or redis-cli missing), or undefined when it can. */
export function clusterUnavailableReason(): string | undefined {
  for (const binary of ['redis-server', 'redis-cli']) {
    const probe = spawnSync(binary, ['--version'], { stdio: 'ignore' });
    if (probe.error || probe.status !== 0) return `${binary} is not on PATH (apt-get install redis-server)`;
  }
  return undefined;
}

export interface RedisClusterNodeProcess extends RedisClusterNode {
  process: ChildProcess;
}

export interface LocalRedisCluster {
  nodes: RedisClusterNodeProcess[];
  /** `host:port,…` of every node, as REDIS_CLUSTER_NODES takes it. */
  seeds: string;
  stop(): Promise<void>;
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** The port range cluster nodes are taken from (bus ports +10000): kept apart from other suites' Redis. */
const CLUSTER_PORTS = { first: 7100, last: 7199 };

/** `count` ports in CLUSTER_PORTS whose cluster bus port (port+10000) is free too, from a random start. */
async function clusterPorts(count: number): Promise<number[]> {
  const ports: number[] = [];
  const span = CLUSTER_PORTS.last - CLUSTER_PORTS.first + 1;
  const start = Math.floor(Math.random() * span);
  for (let step = 0; step < span && ports.length < count; step++) {
    const port = CLUSTER_PORTS.first + ((start + step) % span);
    if ((await portFree(port)) && (await portFree(port + 10000))) ports.push(port);
  }
  if (ports.length < count)
    throw new Error(
      `only ${ports.length} of ${count} free ports (with port+10000 free) in ${CLUSTER_PORTS.first}-${CLUSTER_PORTS.last}`,
    );
  return ports;
}

/** A node answers PING (the same probe a worker's start uses), or the start fails naming its port. */
function waitForPing(port: number): Promise<void> {
  return assertRedisReachable(`redis://127.0.0.1:${port}`, 10_000);
}

/**
 * Starts `count` cluster-enabled redis-servers on loopback (each in its own dir, node timeout
 * 2 s so a failover takes seconds) and, unless `create: false`, joins them with
 * `redis-cli --cluster create … --cluster-replicas <replicas>` and waits for cluster_state:ok everywhere.
 */
export async function startRedisCluster({
  count = 6,
  replicas = 1,
  create = true,
  nodeTimeoutMs = 2000,
} = {}): Promise<LocalRedisCluster> {
  const root = mkdtempSync(join(tmpdir(), 'agentq-cluster-'));
  const ports = await clusterPorts(count);
  const nodes: RedisClusterNodeProcess[] = ports.map((port) => {
    const dir = join(root, String(port));
    mkdirSync(dir);
    const args = [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      'nodes.conf',
    ];
    args.push(
      '--cluster-node-timeout',
      String(nodeTimeoutMs),
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      'yes',
      '--appendfsync',
      'everysec',
    );
    const child = spawn('redis-server', args, { stdio: 'ignore' });
    return { host: '127.0.0.1', port, process: child };
  });
  const stop = async () => {
    for (const node of nodes)
      if (node.process.exitCode === null && node.process.signalCode === null) node.process.kill('SIGKILL');
    await Promise.all(
      nodes.map((node) =>
        node.process.exitCode === null && node.process.signalCode === null
          ? new Promise((resolve) => node.process.once('exit', resolve))
          : undefined,
      ),
    );
    rmSync(root, { recursive: true, force: true });
  };
  try {
    await Promise.all(ports.map(waitForPing));
    if (create) {
      await run('redis-cli', [
        '--cluster',
        'create',
        ...ports.map((port) => `127.0.0.1:${port}`),
        '--cluster-replicas',
        String(replicas),
        '--cluster-yes',
      ]);
      await waitForClusterOk(ports);
      if (replicas > 0) await waitForReplicasInSync(ports, count - count / (replicas + 1));
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { nodes, seeds: ports.map((port) => `127.0.0.1:${port}`).join(','), stop };
}

/** Every node reports cluster_state:ok (the create command returns before gossip has settled). */
export async function waitForClusterOk(ports: number[], timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const port of ports) {
    const redis = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
    redis.on('error', () => undefined);
    try {
      for (;;) {
        const info = (await redis.call('CLUSTER', 'INFO').catch(() => '')) as string;
        if (/cluster_state:ok/.test(info)) break;
        if (Date.now() > deadline) throw new Error(`cluster node ${port} not ok after ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      redis.disconnect();
    }
  }
}

/**
 * Every replica is attached and in sync. `--cluster create` returns while the replicas still show as
 * masters without slots; a master killed then has no replica to promote, and a failover test would
 * measure the helper, not the failover.
 */
export async function waitForReplicasInSync(
  ports: number[],
  expectedReplicas: number,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let synced = 0;
    for (const port of ports) {
      const redis = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
      redis.on('error', () => undefined);
      try {
        const info = (await redis.info('replication').catch(() => '')) as string;
        if (/role:slave/.test(info) && /master_link_status:up/.test(info) && /master_sync_in_progress:0/.test(info))
          synced++;
      } finally {
        redis.disconnect();
      }
    }
    if (synced >= expectedReplicas) return;
    if (Date.now() > deadline)
      throw new Error(`only ${synced} of ${expectedReplicas} replicas in sync after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * A config of its own on `cluster` (as testConfig on one Redis): cluster mode, key and queue prefixes no
 * other test uses, the queue prefix hash-tagged as cluster mode requires.
 */
export function clusterTestConfig(cluster: LocalRedisCluster, env: Record<string, string> = {}): Config {
  const id = randomBytes(4).toString('hex');
  return loadConfig({
    REDIS_CLUSTER_NODES: cluster.seeds,
    AGENTQ_KEY_PREFIX: `t${id}`,
    AGENTQ_QUEUE_PREFIX: `{q${id}}`,
    AGENTQ_LOG_LEVEL: process.env.AGENTQ_LOG_LEVEL ?? 'silent',
    AGENTQ_SHUTDOWN_GRACE_MS: '2000',
    AGENTQ_UNSERVED_GRAPH_WAIT_MS: '0',
    ...env,
  });
}
