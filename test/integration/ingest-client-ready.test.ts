import type { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { IngestClient } from '../../producer/client/ingest-client.js';
import { testConfig } from '../helpers/test-env.js';

/**
 * A producer's connections have no offline queue, and a document's bytes go through a second one: a
 * first ingest must wait for that one too (a loaded CI run answered an upload right after start-up with
 * 503 "Stream isn't writeable" when only the first connection was waited for).
 */
describe('IngestClient before its connections are up', () => {
  const client = new IngestClient({ config: testConfig() });
  afterAll(() => client.close());

  it('an ingest waits for the connection that carries the bytes, not only the first one', async () => {
    await client.progress('ing_000000000000000000000000'); // the first connection is ready now
    // The bytes' connection goes down and is coming back, as it may still be coming up after construction.
    const blob = (client as unknown as { blobRedis: Redis }).blobRedis;
    const closed = new Promise((resolve) => blob.once('close', resolve));
    blob.disconnect(true);
    await closed;
    expect(blob.status).not.toBe('ready');
    const batch = await client.ingest(
      [{ name: 'notes.txt', content: Buffer.from('The first ingest after start-up.\n') }],
      { collection: 'ready' },
    );
    expect(batch.documents).toMatchObject([{ status: 'queued' }]);
  });
});
