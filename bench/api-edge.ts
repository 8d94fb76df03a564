/**
 * `npx tsx bench/api-edge.ts [--root <checkout>] [--upload-mb 320] [--streams 400] [--port 7510]`: the API's
 * edge under load, measured on the API in a process of its own
 * (bench/workers/api-edge-server.ts) against a private redis-server on `--port`:
 *   - one upload of `--upload-mb` MB (files of 40 MB, streamed from here, never held whole): the API's
 *     RSS before and its peak during the request, and the answer's status;
 *   - `--streams` SSE streams of queued runs held open at once: Redis clients and API file descriptors
 *     added by them.
 * `--root` runs another checkout's API with the same driver (before/after a change). Prints name=value.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { request as httpRequest, get as httpGet, type ClientRequest } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { startPrivateRedis } from '../shared/redis/private-redis-server.js';

const { values } = parseArgs({
  options: {
    root: { type: 'string' },
    'upload-mb': { type: 'string', default: '320' },
    streams: { type: 'string', default: '400' },
    port: { type: 'string', default: '7510' },
  },
});
const here = fileURLToPath(new URL('..', import.meta.url));
const root = values.root ?? here;
const KEY = 'bench-key-0123456789abcdef';
const log = (line: string) => process.stderr.write(`${line}\n`);

interface Report {
  rssMb: number;
  peakRssMb: number;
  fds: number;
}

async function startApi(redisUrl: string, dataDir: string, env: Record<string, string>) {
  const child: ChildProcess = fork(join(here, 'bench/workers/api-edge-server.ts'), {
    execArgv: ['--import', 'tsx'],
    env: {
      ...process.env,
      AGENTQ_BENCH_ROOT: root,
      REDIS_URL: redisUrl,
      AGENTQ_API_KEYS: `${KEY}:bench:admin`,
      AGENTQ_KEY_PREFIX: `b${Date.now()}`,
      AGENTQ_DATA_DIR: dataDir,
      AGENTQ_RATE_LIMIT_PER_MINUTE: '0',
      AGENTQ_TENANT_MAX_INFLIGHT: '0',
      AGENTQ_LOG_LEVEL: 'silent',
      EMBED_PROVIDER: 'none',
      ...env,
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const next = <T>(type: string) =>
    new Promise<T>((resolve) => {
      const onMessage = (message: { type: string }) => {
        if (message.type !== type) return;
        child.off('message', onMessage);
        resolve(message as T);
      };
      child.on('message', onMessage);
    });
  const { url } = await next<{ url: string }>('ready');
  return {
    url,
    reset: () => child.send({ type: 'reset' }),
    report: async () => {
      const answer = next<Report>('report');
      child.send({ type: 'report' });
      return answer;
    },
    stop: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.send({ type: 'stop' });
      await exited;
    },
  };
}

/** POSTs `totalMb` of files (40 MB each) as one multipart body written piece by piece; → the status. */
function upload(url: string, totalMb: number): Promise<number> {
  const boundary = '----agentqBench';
  const piece = Buffer.alloc(64 * 1024, 'lorem ipsum dolor sit amet ');
  const fileBytes = 40 * 1024 * 1024;
  const files = Math.ceil((totalMb * 1024 * 1024) / fileBytes);
  return new Promise((resolve, reject) => {
    const outgoing: ClientRequest = httpRequest(`${url}/v1/documents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
    let answered = false;
    outgoing.on('response', (response) => {
      answered = true;
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    outgoing.on('error', (error) => (answered ? undefined : reject(error)));
    let file = 0;
    let written = 0;
    const pump = () => {
      while (!answered) {
        if (file === files) return void outgoing.end(`\r\n--${boundary}--\r\n`);
        let chunk = piece;
        if (written === 0)
          chunk = Buffer.concat([
            Buffer.from(
              `${file === 0 ? '' : '\r\n'}--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="f${file}.txt"\r\n\r\n`,
            ),
            piece,
          ]);
        written += piece.length;
        if (written >= fileBytes) {
          file += 1;
          written = 0;
        }
        if (!outgoing.write(chunk)) return void outgoing.once('drain', pump);
      }
    };
    pump();
  });
}

async function main(): Promise<void> {
  const redis = await startPrivateRedis({ port: Number(values.port) });
  const admin = new Redis(redis.url);
  const dataDir = mkdtempSync(join(tmpdir(), 'agentq-edge-bench-'));
  const figures: Record<string, number | string> = { root };
  try {
    // 1. One large upload, accepted (the cap set above it, so the figure is the hand-in's, not a refusal's).
    const uploadMb = Number(values['upload-mb']);
    let api = await startApi(redis.url, dataDir, { AGENTQ_UPLOAD_MAX_BYTES: String(2 * uploadMb * 1024 * 1024) });
    await new Promise((resolve) => setTimeout(resolve, 500));
    api.reset();
    const before = await api.report();
    log(`upload ${uploadMb} MB to ${root}`);
    figures.upload_status = await upload(api.url, uploadMb);
    const after = await api.report();
    figures.upload_mb = uploadMb;
    figures.api_rss_before_upload_mb = before.rssMb;
    figures.api_peak_rss_during_upload_mb = after.peakRssMb;
    await api.stop();
    await admin.flushall();

    // 2. Many SSE streams held open.
    const streams = Number(values.streams);
    api = await startApi(redis.url, dataDir, {
      AGENTQ_SSE_MAX_STREAMS: '0',
      AGENTQ_SSE_TENANT_MAX_STREAMS: '0',
      AGENTQ_UNSERVED_GRAPH_WAIT_MS: '3600000',
    });
    const runs: string[] = [];
    for (let index = 0; index < streams; index += 1) {
      const response = await fetch(`${api.url}/v1/runs?queueUnserved=true`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ graph: 'chain', input: { steps: 1 } }),
      });
      runs.push(((await response.json()) as { id: string }).id);
    }
    const clients = async () => Number(/connected_clients:(\d+)/.exec(await admin.info('clients'))![1]);
    const clientsBefore = await clients();
    const fdsBefore = (await api.report()).fds;
    log(`${streams} SSE streams to ${root}`);
    const open = await Promise.all(
      runs.map(
        (runId) =>
          new Promise<ClientRequest>((resolve, reject) => {
            const outgoing = httpGet(
              `${api.url}/v1/runs/${runId}/events`,
              { headers: { authorization: `Bearer ${KEY}` }, agent: false },
              (response) => {
                response.resume();
                resolve(outgoing);
              },
            );
            outgoing.on('error', reject);
          }),
      ),
    );
    // Let every stream reach its reads (a blocking connection per stream connects after the answer starts).
    await new Promise((resolve) => setTimeout(resolve, 2000));
    figures.sse_streams = streams;
    figures.redis_clients_added = (await clients()) - clientsBefore;
    figures.api_fds_added = (await api.report()).fds - fdsBefore;
    for (const outgoing of open) outgoing.destroy();
    await api.stop();
  } finally {
    admin.disconnect();
    await redis.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  for (const [name, value] of Object.entries(figures)) process.stdout.write(`${name}=${value}\n`);
}

await main();
