import type { QdrantClient, Schemas } from '@qdrant/js-client-rest';
import { AgentqError } from '../../contracts/errors.js';
import {
  CHUNK_PAYLOAD_INDEXES,
  chunksCollectionBody,
  denseVectorDimensions,
  denseVectorName,
  MINIMUM_QDRANT_VERSION,
  REGISTRY_COLLECTION_BODY,
  REGISTRY_PAYLOAD_INDEXES,
  SPARSE_VECTOR,
  type PayloadIndexSchema,
  type QdrantCollectionNames,
} from './qdrant-layout.js';
import { qdrantStatus } from './qdrant-request.js';

/** Runs one request with the store's retries and error translation. */
type QdrantRequest = <T>(operation: string, request: () => Promise<T>) => Promise<T>;

/**
 * Makes the Qdrant side look like qdrant-layout.ts says, once per process and then only when needed:
 * checks the server version, creates the two collections and their payload indexes when missing, and
 * adds a `dense-<length>` vector the first time records of that length arrive. Every step tolerates
 * another worker doing the same at the same moment (a failed creation is followed by a fresh look).
 */
export class QdrantLayoutKeeper {
  private setup: Promise<void> | undefined;
  /** Lengths with a `dense-<length>` vector in the chunks collection, as last seen. */
  private readonly denseLengths = new Set<number>();

  constructor(
    private readonly client: QdrantClient,
    private readonly names: QdrantCollectionNames,
    private readonly url: string,
    private readonly request: QdrantRequest,
  ) {}

  /**
   * Resolves once the collections exist. `dimensions` only shapes a chunks collection created now (its
   * first dense vector comes with it, saving a request). A failed setup is tried again on the next call.
   */
  ready(dimensions: number | null = null): Promise<void> {
    this.setup ??= this.prepare(dimensions).catch((error: unknown) => {
      this.setup = undefined;
      throw error;
    });
    return this.setup;
  }

  /** Checks the layout again on the next call (the collections were found missing). */
  forget(): void {
    this.setup = undefined;
    this.denseLengths.clear();
  }

  /** Adds the `dense-<length>` vector to the chunks collection unless it is there (Qdrant 1.18+). */
  async ensureDenseVector(dimensions: number): Promise<void> {
    if (await this.hasDenseVector(dimensions)) return;
    const name = denseVectorName(dimensions);
    try {
      await this.request(`add vector ${name} to ${this.names.chunks}`, () =>
        this.client.createVectorName(this.names.chunks, name, { dense: { size: dimensions, distance: 'Cosine' } }),
      );
    } catch (error) {
      if (await this.hasDenseVector(dimensions, true)) return; // another worker added it first
      const status = qdrantStatus(error);
      if (status === 404 || status === 405) {
        throw new AgentqError(
          'UNAVAILABLE',
          `Qdrant at ${this.url} cannot add vectors of length ${dimensions} to ${this.names.chunks} (it has ${[...this.denseLengths].join(', ') || 'none'}): that needs Qdrant 1.18 or newer; upgrade the server`,
          { cause: error },
        );
      }
      throw error;
    }
    this.denseLengths.add(dimensions);
  }

  /** Whether the chunks collection has vectors of this length; asks Qdrant when not known here (or `refresh`). */
  async hasDenseVector(dimensions: number, refresh = false): Promise<boolean> {
    if (this.denseLengths.has(dimensions) && !refresh) return true;
    const info = await this.collectionInfo(this.names.chunks);
    if (info) this.rememberDenseLengths(info);
    return this.denseLengths.has(dimensions);
  }

  private async prepare(dimensions: number | null): Promise<void> {
    const version = await this.request('read the Qdrant version', () => this.client.versionInfo());
    this.checkVersion(version.version);
    const chunks = await this.ensureCollection(
      this.names.chunks,
      chunksCollectionBody(dimensions),
      CHUNK_PAYLOAD_INDEXES,
    );
    const sparse = chunks.config.params.sparse_vectors?.[SPARSE_VECTOR];
    if (sparse?.modifier !== 'idf') {
      throw new AgentqError(
        'INTERNAL',
        `Qdrant collection ${this.names.chunks} at ${this.url} has no sparse vector '${SPARSE_VECTOR}' with modifier 'idf', so agentq did not create it; set AGENTQ_QDRANT_COLLECTION_PREFIX to a prefix of its own`,
      );
    }
    this.rememberDenseLengths(chunks);
    await this.ensureCollection(this.names.registry, REGISTRY_COLLECTION_BODY, REGISTRY_PAYLOAD_INDEXES);
  }

  private checkVersion(version: string): void {
    const match = /^(\d+)\.(\d+)/.exec(version);
    if (!match) return; // a development build: let it try
    const [major, minor] = [Number(match[1]), Number(match[2])];
    const [needMajor, needMinor] = MINIMUM_QDRANT_VERSION;
    if (major < needMajor || (major === needMajor && minor < needMinor)) {
      throw new AgentqError(
        'UNAVAILABLE',
        `Qdrant ${version} at ${this.url} is too old: agentq needs Qdrant ${needMajor}.${needMinor} or newer (1.18 to add a new embedding length later); upgrade the server`,
      );
    }
  }

  /** The collection's info, after creating it (and any missing payload index) if needed. */
  private async ensureCollection(
    name: string,
    body: Schemas['CreateCollection'],
    indexes: ReadonlyArray<readonly [string, PayloadIndexSchema]>,
  ): Promise<Schemas['CollectionInfo']> {
    let info = await this.collectionInfo(name);
    if (!info) {
      try {
        await this.request(`create collection ${name}`, () => this.client.createCollection(name, body));
      } catch (error) {
        // Another worker may have created it between our look and our creation.
        if (!(await this.collectionInfo(name))) throw error;
      }
      info = await this.collectionInfo(name);
      if (!info)
        throw new AgentqError(
          'UNAVAILABLE',
          `Qdrant at ${this.url} accepted collection ${name} but does not show it; try again`,
          { retryable: true },
        );
    }
    for (const [field, schema] of indexes) {
      if (info.payload_schema[field]) continue;
      await this.request(`index ${name}.${field}`, () =>
        this.client.createPayloadIndex(name, { field_name: field, field_schema: schema, wait: true }),
      );
    }
    return info;
  }

  private async collectionInfo(name: string): Promise<Schemas['CollectionInfo'] | null> {
    try {
      return await this.request(`read collection ${name}`, () => this.client.getCollection(name));
    } catch (error) {
      if (qdrantStatus(error) === 404) return null;
      throw error;
    }
  }

  private rememberDenseLengths(info: Schemas['CollectionInfo']): void {
    const vectors = info.config.params.vectors;
    if (!vectors || typeof vectors !== 'object' || 'size' in vectors) return; // an unnamed vector is not ours; ignore it
    for (const name of Object.keys(vectors)) {
      const dimensions = denseVectorDimensions(name);
      if (dimensions !== null) this.denseLengths.add(dimensions);
    }
  }
}
