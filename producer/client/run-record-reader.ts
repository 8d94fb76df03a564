import { AgentqError } from '../../shared/contracts/errors.js';
import { Keys } from '../../shared/store/keys.js';
import { withPartialOutput } from './partial-output.js';
import { DEFAULT_REDIS_URL, type RedisConfig } from '../../shared/config/redis-config.js';
import { describeRedisTarget } from '../../shared/redis/redis-target.js';
import { redisUnreachable } from './redis-ready.js';
import { respAddressOf, RespConnection, type RespAddress } from '../../shared/redis/resp-connection.js';
import { pairsToObject, parseState, runRecordOf } from '../../shared/store/run-meta.js';
import type { RunRecord } from '../../shared/contracts/run-record.js';

/** Where `agentq status` gets a run's record: `RunRecordReader` where it can, else `RunReader`. */
export interface RunRecordSource {
  /** The run record (a cancelled run's with `output.partial`), or null when there is no such run. */
  get(runId: string): Promise<RunRecord | null>;
  close(): Promise<void>;
}

/**
 * A run's record read over a bare RESP connection: `RunReader.get` without ioredis, whose loading cost
 * `agentq status` more CPU than all the rest of it (CLI cold start). The same reads (HGETALL of
 * the run's meta, and of its state for a cancelled run), parsed by the run store's own parsers, and the
 * same refusal when Redis does not answer. It serves one Redis at a plain `redis://` URL (`canRead`);
 * a Cluster, TLS or URL options go through `RunReader` (ioredis).
 *
 * Kept after measuring it against ioredis loaded lazily: `agentq status`, built CLI, hyperfine,
 * 3 rounds × 15 runs on 2 busy cores (load 15-17), mean CPU (user + system) per process: this reader
 * 120-131 ms; RunReader (ioredis) 242-250 ms; a reader like this one on ioredis alone 224-254 ms;
 * `--help` 109-129 ms. ioredis's loading is the difference (~110 ms CPU, 150-430 ms wall there). The
 * bench keeps both figures (`cli_cpu_ms_status`, `cli_cpu_ms_status_ioredis`: `npm run bench -- --only cli`).
 */
export class RunRecordReader implements RunRecordSource {
  private readonly keys: Keys;
  private readonly address: RespAddress;
  private connection: Promise<RespConnection> | undefined;

  /** True when `config` names one Redis at a URL this reader connects to by itself. */
  static canRead(config: RedisConfig): boolean {
    return !config.redisClusterNodes && respAddressOf(config.redisUrl ?? DEFAULT_REDIS_URL) !== undefined;
  }

  constructor(private readonly config: RedisConfig) {
    const address = config.redisClusterNodes ? undefined : respAddressOf(config.redisUrl ?? DEFAULT_REDIS_URL);
    if (!address)
      throw new AgentqError(
        'INTERNAL',
        `RunRecordReader cannot read from ${describeRedisTarget(config)}: check RunRecordReader.canRead first and use RunReader`,
      );
    this.address = address;
    this.keys = new Keys(config.keyPrefix, config.shards);
  }

  async get(runId: string): Promise<RunRecord | null> {
    const record = runRecordOf(await this.hgetall(this.keys.run(runId).meta));
    return record && withPartialOutput(record, async (id) => parseState(await this.hgetall(this.keys.run(id).state)));
  }

  async close(): Promise<void> {
    const connection = this.connection;
    this.connection = undefined;
    (await connection?.catch(() => undefined))?.close();
  }

  private async hgetall(key: string): Promise<Record<string, string>> {
    const connection = await this.connect();
    return pairsToObject((await connection.command('HGETALL', key)) as string[]);
  }

  /** RunReader's wait for Redis: the command timeout and a second more, then UNAVAILABLE naming the target. */
  private connect(): Promise<RespConnection> {
    this.connection ??= RespConnection.open(this.address, {
      readyTimeoutMs: this.config.redisCommandTimeoutMs + 1000,
      commandTimeoutMs: this.config.redisCommandTimeoutMs,
    }).catch((error: unknown) => {
      throw redisUnreachable(this.config, error);
    });
    return this.connection;
  }
}

/**
 * The source `agentq status` reads from: a `RunRecordReader` where it can read (one Redis at a plain
 * `redis://` URL), else a `RunReader` (ioredis), loaded only then.
 */
export async function openRunRecordSource(config: RedisConfig): Promise<RunRecordSource> {
  if (RunRecordReader.canRead(config)) return new RunRecordReader(config);
  const { RunReader } = await import('./run-reader.js');
  return new RunReader({ config });
}
