import { createHash } from 'node:crypto';
import { Command, Redis, type RedisOptions } from 'ioredis';
import { DEFAULT_REDIS_URL } from '../config/redis-config.js';
import { redisNodes, type RedisConnection } from './redis-connection.js';

export type RedisRole = 'worker' | 'step' | 'producer' | 'blocking' | 'subscriber';

/**
 * The wait before reconnect attempt `times` (ioredis's own curve: 50 ms more per attempt, at most 2 s),
 * so every connection is back within about 2 s of Redis answering again. Give it to BullMQ connections
 * made from options too (`retryStrategy`): BullMQ's default grows to 20 s, which kept workers from
 * taking jobs for 8 s after a 30 s outage.
 */
export function reconnectDelay(times: number): number {
  return Math.min(times * 50, 2000);
}

/**
 * Connections by role (docs/operations/redis.md). Workers wait out Redis outages
 * (`maxRetriesPerRequest: null`, as BullMQ requires). A worker's step connection (`step`: takes, commits,
 * paid claims) waits out outages too, but each command fails after `commandTimeoutMs`: a connection whose
 * replies stopped coming while its socket stays open (a grey network fault, a stuck middlebox) then parks
 * the step instead of holding it for as long as the OS keeps the socket. It carries no blocking command.
 * Producers fail fast: no offline queue and a command timeout, so "Redis down" is an error within a second,
 * not a hang (a SIGSTOPped Redis keeps its sockets open). Blocking readers (XREAD BLOCK) get no command
 * timeout, nor do pub/sub subscribers.
 */
export function createRedis(url: string | undefined, role: RedisRole, commandTimeoutMs = 1000): Redis {
  const options: RedisOptions =
    role === 'worker'
      ? // No auto-pipelining: measured with `npm run bench:steps`, its per-command bookkeeping cost a
        // worker about a fifth of its step throughput at 100 runs in flight.
        { maxRetriesPerRequest: null }
      : role === 'step'
        ? { maxRetriesPerRequest: null, commandTimeout: commandTimeoutMs }
        : role === 'producer'
          ? { enableOfflineQueue: false, commandTimeout: commandTimeoutMs, maxRetriesPerRequest: 1 }
          : { maxRetriesPerRequest: null };
  const redis = new Redis(url ?? DEFAULT_REDIS_URL, { ...options, retryStrategy: reconnectDelay, lazyConnect: false });
  if (role === 'worker' || role === 'step') coalesceWrites(redis);
  // A connection error reaches the command that needed the connection (and the queue workers log the
  // outage); without a listener ioredis also prints "[ioredis] Unhandled error event" on stderr, outside
  // the JSON logs, at every reconnect attempt.
  redis.on('error', () => undefined);
  return redis;
}

/**
 * The commands a connection sends in one go of the event loop's callbacks (one socket read's replies
 * resolving many steps, each sending its next transition) leave in one write: the socket is corked at
 * the first and uncorked once the callbacks and their promise continuations have run (process.nextTick
 * queued from them runs after the microtask queue drains). Measured with `npm run bench:steps` at 100
 * runs in flight: each write was a syscall that also runs loopback TCP to Redis, the largest single item
 * of a worker's CPU profile (writeUtf8String, ~14 %), and Redis reads many commands per read. Unlike
 * ioredis's auto-pipelining (rejected above) it costs one check per command, and delays nothing past
 * the current callback.
 */
function coalesceWrites(redis: Redis): void {
  const send = redis.sendCommand;
  let corked: { uncork(): void } | undefined;
  const uncork = () => {
    const stream = corked;
    corked = undefined;
    stream?.uncork();
  };
  redis.sendCommand = function coalescedSendCommand(this: Redis, ...args: Parameters<typeof send>) {
    const stream = (this as unknown as { stream?: { cork(): void; uncork(): void; writable?: boolean } }).stream;
    if (!corked && this.status === 'ready' && stream?.writable) {
      stream.cork();
      corked = stream;
      process.nextTick(uncork);
    }
    return send.apply(this, args);
  } as typeof send;
}

interface Script {
  lua: string;
  sha: string;
}

const scripts = new Map<string, Script>();

function script(lua: string): Script {
  let entry = scripts.get(lua);
  if (!entry) {
    entry = { lua, sha: createHash('sha1').update(lua).digest('hex') };
    scripts.set(lua, entry);
  }
  return entry;
}

/** EVALSHA with a fallback to EVAL when Redis does not have the script yet (fresh or restarted Redis). */
export async function runScript<T>(
  redis: RedisConnection,
  lua: string,
  keys: string[],
  args: (string | number)[],
): Promise<T> {
  const { sha } = script(lua);
  try {
    return await send<T>(redis, 'evalsha', [sha, keys.length, ...keys, ...args]);
  } catch (error) {
    if (error instanceof Error && error.message.includes('NOSCRIPT')) {
      return send<T>(redis, 'eval', [lua, keys.length, ...keys, ...args]);
    }
    throw error;
  }
}

/**
 * What `redis.evalsha(...args)` does, less its `args.flat()`: ioredis flattens every command's
 * arguments with Array.prototype.flat, which costs about 95 ns per argument on Node 20 (measured: 3 µs
 * of a commit's 30), and these are flat already (FlatCommand takes them as they are).
 */
function send<T>(redis: RedisConnection, name: string, args: (string | number)[]): Promise<T> {
  return redis.sendCommand(new FlatCommand(name, args, { replyEncoding: 'utf8' })) as Promise<T>;
}

/**
 * A command whose wire form is written straight into one Buffer instead of ioredis's `+=` per argument,
 * which leaves a chain of ~5 string pieces per argument for the socket write to flatten: the step
 * transition's ~45 arguments made its request the largest single source of a worker's garbage
 * (allocation profile of `npm run bench:steps`: 16 %; measured 6.7 → 3.2 µs per transition request,
 * its conversion to bytes included). A `join` of per-argument strings took that to 3.2 µs but still
 * allocated ~4 KB of cons strings per request (14.8 % of the worker's bytes); the Buffer (from Node's
 * pool, off the V8 heap) costs about the same time without them (3.15–3.26 against 2.91–3.05 µs per
 * request in a micro-benchmark, the join's byte conversion included), and the socket writes it as it is.
 */
class FlatCommand extends Command {
  constructor(name: string, args: (string | number)[], options: ConstructorParameters<typeof Command>[2]) {
    // Command's constructor flattens what it is given (Array.prototype.flat): given nothing, then handed
    // the arguments, which are flat already. No key prefix is used, so there are no keys to rewrite.
    super(name, [], options);
    // What Command's stringifyArguments does for the arguments it was given (numbers to strings).
    for (let i = 0; i < args.length; i += 1) if (typeof args[i] !== 'string') args[i] = String(args[i]);
    (this as unknown as { args: (string | number)[] }).args = args;
  }

  override toWritable(socket: object): string | Buffer {
    const self = this as unknown as { bufferMode?: boolean; args: string[] };
    if (self.bufferMode) return super.toWritable(socket);
    const args = self.args;
    const lengths = new Array<number>(args.length);
    let size = 1 + digits(args.length + 1) + 2 + 1 + digits(this.name.length) + 2 + this.name.length + 2;
    for (let i = 0; i < args.length; i += 1) {
      const length = Buffer.byteLength(args[i]!);
      lengths[i] = length;
      size += 1 + digits(length) + 2 + length + 2;
    }
    const out = Buffer.allocUnsafe(size);
    out[0] = 42; // *
    let at = writeDigits(out, 1, args.length + 1);
    at = crlf(out, at);
    out[at++] = 36; // $
    at = crlf(out, writeDigits(out, at, this.name.length));
    at += out.write(this.name, at, 'latin1');
    at = crlf(out, at);
    for (let i = 0; i < args.length; i += 1) {
      const arg = args[i]!;
      const length = lengths[i]!;
      out[at++] = 36;
      at = crlf(out, writeDigits(out, at, length));
      at += out.write(arg, at, length, length === arg.length ? 'latin1' : 'utf8');
      at = crlf(out, at);
    }
    return out;
  }
}

function digits(n: number): number {
  return n < 10 ? 1 : n < 100 ? 2 : n < 1000 ? 3 : n < 10_000 ? 4 : String(n).length;
}

function writeDigits(out: Buffer, at: number, n: number): number {
  const end = at + digits(n);
  for (let i = end - 1; i >= at; i -= 1) {
    out[i] = 48 + (n % 10);
    n = Math.floor(n / 10);
  }
  return end;
}

function crlf(out: Buffer, at: number): number {
  out[at] = 13;
  out[at + 1] = 10;
  return at + 2;
}

/**
 * The script's sha1 after making sure Redis has it (for use inside a pipeline, where EVALSHA cannot fall
 * back). On a Cluster every master gets it: a pipeline's EVALSHA goes wherever its keys' slot lives.
 */
export async function runScriptSha(redis: RedisConnection, lua: string): Promise<string> {
  const entry = script(lua);
  if (!loaded.has(redis) || !loaded.get(redis)!.has(entry.sha)) {
    const nodes = await redisNodes(redis);
    await Promise.all(
      nodes.map(async (node) => {
        const [exists] = (await node.script('EXISTS', entry.sha)) as number[];
        if (!exists) await node.script('LOAD', lua);
      }),
    );
    if (!loaded.has(redis)) loaded.set(redis, new Set());
    loaded.get(redis)!.add(entry.sha);
  }
  return entry.sha;
}

const loaded = new WeakMap<RedisConnection, Set<string>>();

/** After NOSCRIPT: Redis lost its script cache (a restart, or a promoted replica); load again on next use. */
export function forgetScripts(redis: RedisConnection): void {
  loaded.delete(redis);
}
