import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the fake received it. */
export interface RecordedRequest {
  method: string;
  /** Path without the query string, e.g. `/collections/agentq_chunks/points`. */
  path: string;
  /** Query parameters, e.g. `{wait: 'true'}`. */
  query: Record<string, string>;
  headers: IncomingMessage['headers'];
  /** Parsed JSON body, or undefined for none. */
  body: unknown;
}

export interface FakeAnswer {
  /** @default 200 */
  status?: number;
  /** Sent as JSON. */
  body: unknown;
  headers?: Record<string, string>;
}

type Scripted = FakeAnswer | 'drop-connection' | ((request: RecordedRequest) => FakeAnswer);

/** Qdrant's envelope of a successful answer (every REST answer of the documented API). */
export function ok(result: unknown): FakeAnswer {
  return { body: { result, status: 'ok', time: 0.000_21 } };
}

/** Qdrant's envelope of an error answer: `{"status": {"error": "..."}, "time": …}`. */
export function failure(status: number, error: string): FakeAnswer {
  return { status, body: { status: { error }, time: 0.000_05 } };
}

/** `UpdateResult` as Qdrant answers writes with `wait=true`. */
const UPDATE_COMPLETED = { operation_id: 7, status: 'completed' };

interface FakeCollection {
  vectors: Record<string, unknown>;
  sparse_vectors: Record<string, unknown>;
  payload_schema: Record<string, unknown>;
}

/**
 * A stand-in for Qdrant's REST API on a loopback port, for request-level tests of the adapter (Qdrant
 * has no binary for these machines). It records every request and answers with the response shapes of
 * Qdrant's documentation. It keeps just enough state to be believable — which collections, named
 * vectors and payload indexes exist — and holds no points: tests script what reads return with
 * {@link QdrantFakeServer.answer}.
 */
export class QdrantFakeServer {
  readonly requests: RecordedRequest[] = [];
  readonly collections = new Map<string, FakeCollection>();
  /** What `GET /` reports. */
  version = '1.18.0';
  private readonly scripts: { method: string; path: RegExp; answers: Scripted[] }[] = [];

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<QdrantFakeServer> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const fake = new QdrantFakeServer(server, `http://127.0.0.1:${port}`);
    server.on('request', (request: IncomingMessage, response: ServerResponse) => void fake.handle(request, response));
    return fake;
  }

  /**
   * The next requests matching `method` and `path` (exact, or a pattern) get these answers, one each,
   * before the documented defaults apply again.
   */
  answer(method: string, path: string | RegExp, ...answers: Scripted[]): void {
    this.scripts.push({
      method,
      path: typeof path === 'string' ? new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) : path,
      answers,
    });
  }

  /** A collection as if created earlier, with named dense vectors of these lengths and every index agentq makes. */
  addCollection(
    name: string,
    vectors: Record<string, unknown> = {},
    sparseVectors: Record<string, unknown> = {},
    indexedFields: string[] = [],
  ): void {
    this.collections.set(name, {
      vectors,
      sparse_vectors: sparseVectors,
      payload_schema: Object.fromEntries(indexedFields.map((field) => [field, { data_type: 'keyword', points: 0 }])),
    });
  }

  /** Requests to paths matching `path` (and `method`, if given). */
  requestsTo(path: RegExp, method?: string): RecordedRequest[] {
    return this.requests.filter(
      (request) => path.test(request.path) && (method === undefined || request.method === method),
    );
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const url = new URL(request.url ?? '/', this.url);
    const recorded: RecordedRequest = {
      method: request.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: request.headers,
      body: text.length > 0 ? JSON.parse(text) : undefined,
    };
    this.requests.push(recorded);
    const script = this.scripts.find(
      (candidate) =>
        candidate.method === recorded.method && candidate.path.test(recorded.path) && candidate.answers.length > 0,
    );
    const scripted = script?.answers.shift();
    if (scripted === 'drop-connection') {
      request.socket.destroy();
      return;
    }
    const answer =
      scripted === undefined
        ? this.documentedDefault(recorded)
        : typeof scripted === 'function'
          ? scripted(recorded)
          : scripted;
    response.writeHead(answer.status ?? 200, { 'content-type': 'application/json', ...answer.headers });
    response.end(JSON.stringify(answer.body));
  }

  /** What Qdrant answers when nothing is scripted, from the documentation's examples. */
  private documentedDefault({ method, path, body }: RecordedRequest): FakeAnswer {
    if (method === 'GET' && path === '/')
      return {
        body: {
          title: 'qdrant - vector search engine',
          version: this.version,
          commit: '0a6f3ba1e9bd5bb7f4fc1cb8b7ac46e4d9a5f0a2',
        },
      };
    const match = /^\/collections\/([^/]+)(\/.*)?$/.exec(path);
    if (!match) return failure(404, `Not found: ${path}`);
    const name = decodeURIComponent(match[1]!);
    const rest = match[2] ?? '';
    const collection = this.collections.get(name);
    const missing = failure(404, `Not found: Collection \`${name}\` doesn't exist!`);
    if (rest === '') {
      if (method === 'PUT') {
        if (collection) return failure(409, `Wrong input: Collection \`${name}\` already exists!`);
        const { vectors = {}, sparse_vectors = {} } = body as {
          vectors?: Record<string, unknown>;
          sparse_vectors?: Record<string, unknown>;
        };
        this.collections.set(name, { vectors, sparse_vectors, payload_schema: {} });
        return ok(true);
      }
      if (method === 'DELETE') return ok(this.collections.delete(name));
      if (method === 'GET') return collection ? ok(collectionInfo(collection)) : missing;
    }
    if (!collection) return missing;
    if (method === 'PUT' && rest === '/index') {
      const { field_name: field, field_schema: schema } = body as { field_name: string; field_schema: unknown };
      collection.payload_schema[field] = {
        data_type: typeof schema === 'string' ? schema : (schema as { type: string }).type,
        ...(typeof schema === 'object' ? { params: schema } : {}),
        points: 0,
      };
      return ok(UPDATE_COMPLETED);
    }
    const vectorMatch = /^\/vectors\/([^/]+)$/.exec(rest);
    if (method === 'PUT' && vectorMatch) {
      const config = body as { dense?: unknown; sparse?: unknown };
      if (config.dense) collection.vectors[decodeURIComponent(vectorMatch[1]!)] = config.dense;
      if (config.sparse) collection.sparse_vectors[decodeURIComponent(vectorMatch[1]!)] = config.sparse;
      return ok(UPDATE_COMPLETED);
    }
    if (method === 'PUT' && rest === '/points') return ok(UPDATE_COMPLETED);
    if (method === 'POST' && rest === '/points/delete') return ok(UPDATE_COMPLETED);
    if (method === 'POST' && rest === '/points/scroll') return ok({ points: [], next_page_offset: null });
    if (method === 'POST' && rest === '/points/count') return ok({ count: 0 });
    if (method === 'POST' && rest === '/points/query') return ok({ points: [] });
    if (method === 'POST' && rest === '/facet') return ok({ hits: [] });
    return failure(404, `Not found: ${method} ${path}`);
  }
}

/** `GET /collections/{name}` as in Qdrant's "Collection info" example, with this collection's vectors and indexes. */
function collectionInfo(collection: FakeCollection): unknown {
  return {
    status: 'green',
    optimizer_status: 'ok',
    indexed_vectors_count: 0,
    points_count: 0,
    segments_count: 2,
    config: {
      params: {
        vectors: collection.vectors,
        sparse_vectors: collection.sparse_vectors,
        shard_number: 1,
        replication_factor: 1,
        write_consistency_factor: 1,
        on_disk_payload: true,
      },
      hnsw_config: { m: 16, ef_construct: 100, full_scan_threshold: 10000, max_indexing_threads: 0, on_disk: false },
      optimizer_config: {
        deleted_threshold: 0.2,
        vacuum_min_vector_number: 1000,
        default_segment_number: 0,
        max_segment_size: null,
        memmap_threshold: null,
        indexing_threshold: 20000,
        flush_interval_sec: 5,
        max_optimization_threads: null,
      },
      wal_config: { wal_capacity_mb: 32, wal_segments_ahead: 0 },
      quantization_config: null,
    },
    payload_schema: collection.payload_schema,
  };
}
