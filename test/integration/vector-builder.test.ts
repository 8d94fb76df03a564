import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createRedis } from '../../shared/redis/create-redis.js';
import { SqliteVectorStore } from '../../shared/adapters/sqlite/sqlite-vector-store.js';
import type { Embedder } from '../../shared/ports/embedder.js';
import { Keys } from '../../shared/store/keys.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { VectorBuilder } from '../../worker/ingest/vector-builder.js';
import { tempDirectory } from '../helpers/ingest-fixtures.js';
import { eventually } from '../helpers/test-env.js';

/** An embedder that takes `delayMs` per call and counts every text it embeds. */
function slowEmbedder(delayMs: number): Embedder & { texts: string[] } {
  const texts: string[] = [];
  return {
    provider: 'test',
    modelId: 'slow',
    texts,
    async embed(batch) {
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      texts.push(...batch);
      return {
        vectors: batch.map((text) => [text.length, 1]),
        usage: { inputTokens: 0 },
        model: 'slow',
        dimensions: 2,
      };
    },
  };
}

describe('VectorBuilder', () => {
  const data = tempDirectory();
  const redis = createRedis(inject('redisUrl'), 'worker');
  const keys = new Keys(`vb${randomBytes(4).toString('hex')}`);
  const store = new SqliteVectorStore({ path: join(data.path, 'vectors.sqlite') });
  afterAll(async () => {
    await store.close();
    redis.disconnect();
    data.remove();
  });

  it('keeps its lease while a page takes longer than the lease lasts: with two workers, every chunk embedded once', async () => {
    const records = Array.from({ length: 150 }, (_, index) => ({ id: `r${index}`, text: `record number ${index}` }));
    await store.upsert('acme', 'slow', records);
    const embedders = [slowEmbedder(600), slowEmbedder(600)];
    const builders = embedders.map(
      (embedder) =>
        new VectorBuilder({
          redis,
          keys,
          vectorStore: () => store,
          embedder,
          logger: createLogger('silent'),
          leaseMs: 200,
          pollMs: 50,
        }),
    );
    for (const builder of builders) builder.start();
    try {
      await builders[0]!.added('acme', 'slow');
      await eventually(
        async () => (await store.pendingVectors('acme', 'slow', { limit: 1 })).length === 0,
        20_000,
        'every vector added',
      );
      const embedded = embedders.flatMap((embedder) => embedder.texts);
      expect(embedded).toHaveLength(150);
      expect(new Set(embedded).size).toBe(150);
      // Done: the collection's mark is gone, so idle workers stop looking at it.
      await eventually(async () => (await redis.smembers(keys.vectorsPending())).length === 0, 5000, 'mark removed');
    } finally {
      await Promise.all(builders.map((builder) => builder.close()));
    }
  }, 30_000);

  it('embeds a text repeated across chunks once, and leaves a collection another worker holds', async () => {
    await store.upsert('acme', 'repeats', [
      { id: 'a', text: 'boilerplate paragraph' },
      { id: 'b', text: 'boilerplate paragraph' },
      { id: 'c', text: 'something else' },
    ]);
    await store.upsert('acme', 'held', [{ id: 'h', text: 'held elsewhere' }]);
    await redis.set(keys.documents('acme').vectorLease('held'), 'another-worker', 'PX', 60_000);
    const embedder = slowEmbedder(10);
    const builder = new VectorBuilder({
      redis,
      keys,
      vectorStore: () => store,
      embedder,
      logger: createLogger('silent'),
      leaseMs: 5000,
      pollMs: 50,
    });
    builder.start();
    try {
      await builder.added('acme', 'held');
      await builder.added('acme', 'repeats');
      await eventually(
        async () => (await store.pendingVectors('acme', 'repeats', { limit: 1 })).length === 0,
        10_000,
        'repeats embedded',
      );
      expect(embedder.texts.sort()).toEqual(['boilerplate paragraph', 'something else']);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await store.pendingVectors('acme', 'held', { limit: 5 })).toHaveLength(1);
    } finally {
      await builder.close();
    }
  });
});
