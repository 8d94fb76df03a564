import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, KEYS, startApiTestEnv, type ApiTestEnv } from '../helpers/api-test-env.js';
import { tempDirectory } from '../helpers/ingest-fixtures.js';
import { multipart } from '../helpers/multipart-body.js';
import { recordFigure } from '../helpers/suite-figures.js';
import { atScale } from '../helpers/suite-scale.js';
import { eventually } from '../helpers/test-env.js';

/**
 * Attack: one `POST /v1/documents` whose files add up to far more than anyone should
 * upload at once (the API used to buffer every part in memory: 320 MB took it from 177 to 456 MB, and the
 * limits allowed ~50 GB). Expected answer: the files stream to Redis as they arrive; past
 * AGENTQ_UPLOAD_MAX_BYTES (all files) or AGENTQ_INGEST_MAX_BYTES (one file) the API answers 413 at once,
 * naming the limit, without reading the rest — and nothing already accepted is lost: a document indexed
 * before keeps its indexed version (not replaced by the refused request's copy), the refused request
 * leaves no record, batch or bytes behind, and the same files within the cap are accepted afterwards.
 * Full scale (npm run test:security) streams a never-ending body against a 64 MiB cap.
 */
const CAP = atScale(256 * 1024, 64 * 1024 * 1024);
const FILE_MAX = atScale(128 * 1024, 32 * 1024 * 1024);
const PIECE = 64 * 1024;

/** Text that reads as words (the chunker and search treat it as a document). */
const filler = (bytes: number, word: string) => `${word} `.repeat(Math.ceil(bytes / (word.length + 1))).slice(0, bytes);

describe('uploads: streamed, capped per request and per file (issue 35 item 5)', () => {
  const data = tempDirectory('agentq-upload-cap-');
  let env: ApiTestEnv;
  let url = '';

  const upload = (files: { name: string; content: string | Buffer }[], collection = 'handbook') =>
    env.as(KEYS.acmeProducer, { method: 'POST', url: '/v1/documents', ...multipart({ collection }, files) });
  const documents = async () =>
    json<{ documents: { path: string; status: string; contentHash: string | null; pendingHash: string | null }[] }>(
      await env.as(KEYS.acmeProducer, { method: 'GET', url: '/v1/documents' }),
    ).documents;
  /** Keys an upload may leave in Redis (received bytes not handed in) and ingest batches. */
  const leftovers = async (pattern: string) => {
    const found: string[] = [];
    let cursor = '0';
    do {
      const [next, keys] = await env.client.store.redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      found.push(...keys);
    } while (cursor !== '0');
    return found;
  };
  const prefix = () => `${env.config.keyPrefix}:{docs:acme}`;

  beforeAll(async () => {
    env = await startApiTestEnv({
      env: {
        AGENTQ_DATA_DIR: data.path,
        AGENTQ_UPLOAD_MAX_BYTES: String(CAP),
        AGENTQ_INGEST_MAX_BYTES: String(FILE_MAX),
      },
    });
    url = await env.app.listen({ port: 0, host: '127.0.0.1' });
    // Accepted before the attack: it must come out of it unchanged.
    const accepted = await upload([{ name: 'policy.md', content: '# Policy\n\nFerrets are welcome on Fridays.\n' }]);
    expect(accepted.statusCode).toBe(202);
    await eventually(async () => (await documents()).find((document) => document.status === 'indexed'), 30_000);
  });
  afterAll(async () => {
    await env?.close();
    data.remove();
  });

  it('files adding up to more than AGENTQ_UPLOAD_MAX_BYTES answer 413, and nothing of the request is kept', async () => {
    const before = await documents();
    const batchesBefore = await leftovers(`${prefix()}:batch:*`);
    const third = Math.ceil(CAP / 3) + 1;
    const refused = await upload([
      // A new version of the accepted document: must not replace it.
      { name: 'policy.md', content: '# Policy\n\nFerrets are banned.\n' },
      { name: 'one.txt', content: filler(Math.min(third, FILE_MAX), 'alpha') },
      { name: 'two.txt', content: filler(Math.min(third, FILE_MAX), 'beta') },
      { name: 'three.txt', content: filler(Math.min(third, FILE_MAX), 'gamma') },
      { name: 'four.txt', content: filler(Math.min(third, FILE_MAX), 'delta') },
    ]);
    expect(refused.statusCode).toBe(413);
    expect(json(refused)).toMatchObject({
      error: {
        code: 'PAYLOAD_TOO_LARGE',
        message: expect.stringMatching(
          new RegExp(`more than ${CAP} bytes .*AGENTQ_UPLOAD_MAX_BYTES.*nothing of this request was kept`),
        ),
        details: { limit: 'AGENTQ_UPLOAD_MAX_BYTES', max: CAP },
      },
    });
    expect(await documents()).toEqual(before);
    expect(await leftovers(`${prefix()}:batch:*`)).toEqual(batchesBefore);
    expect(await leftovers(`${prefix()}:upload:*`)).toEqual([]);
    const hits = json<{ hits: { text: string }[] }>(
      await env.as(KEYS.acmeProducer, {
        method: 'POST',
        url: '/v1/search',
        payload: { query: 'ferrets', collection: 'handbook' },
      }),
    ).hits;
    expect(hits.map((hit) => hit.text).join(' ')).toMatch(/welcome on Fridays/);
  });

  it('one file over AGENTQ_INGEST_MAX_BYTES answers 413 naming the file, and nothing of the request is kept', async () => {
    const before = await documents();
    const refused = await upload([
      { name: 'small.txt', content: 'a small honest file' },
      { name: 'huge.txt', content: filler(FILE_MAX + 1, 'omega') },
    ]);
    expect(refused.statusCode).toBe(413);
    expect(json(refused)).toMatchObject({
      error: {
        code: 'PAYLOAD_TOO_LARGE',
        message: expect.stringMatching(/file 'huge\.txt' is larger than .*AGENTQ_INGEST_MAX_BYTES/),
      },
    });
    expect(await documents()).toEqual(before);
    expect(await leftovers(`${prefix()}:upload:*`)).toEqual([]);
  });

  it('a body that never ends is answered 413 once the cap is passed, without reading it to the end', async () => {
    const boundary = '----agentqEndless';
    let sent = 0;
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const outgoing = httpRequest(`${url}/v1/documents`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${KEYS.acmeProducer}`,
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'transfer-encoding': 'chunked',
        },
      });
      let answered = false;
      outgoing.on('response', (response) => {
        answered = true;
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (text: string) => (body += text));
        response.on('end', () => {
          resolve({ status: response.statusCode ?? 0, body });
          outgoing.destroy();
        });
      });
      // Writes after the answer may fail (the API closed the connection): that is the point.
      outgoing.on('error', (error) => (answered ? undefined : reject(error)));
      const piece = Buffer.from(filler(PIECE, 'endless'));
      let file = 0;
      const pump = () => {
        while (!answered && !outgoing.destroyed) {
          // A new file part every FILE_MAX / 2 bytes, so only the per-request cap can stop it.
          const header =
            sent % Math.floor(FILE_MAX / 2) < PIECE
              ? `${file === 0 ? '' : '\r\n'}--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="endless-${(file += 1)}.txt"\r\n\r\n`
              : '';
          sent += piece.length;
          if (!outgoing.write(Buffer.concat([Buffer.from(header), piece]))) return void outgoing.once('drain', pump);
        }
      };
      pump();
    });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body)).toMatchObject({ error: { details: { limit: 'AGENTQ_UPLOAD_MAX_BYTES' } } });
    recordFigure({ scenario: 'upload cap', name: 'bytes_sent_before_413', value: sent, goal: `cap ${CAP}` });
    await eventually(
      async () => (await leftovers(`${prefix()}:upload:*`)).length === 0,
      10_000,
      'no upload bytes left',
    );
  });

  it('an honest upload within the cap is accepted afterwards, as before', async () => {
    // Small enough to index quickly at either scale: what is checked is the acceptance, not the parser.
    const honest = Math.min(Math.floor(CAP / 4), 64 * 1024);
    const accepted = await upload([
      { name: 'one.txt', content: filler(honest, 'alpha') },
      { name: 'two.txt', content: filler(honest, 'beta') },
    ]);
    expect(accepted.statusCode).toBe(202);
    expect(json(accepted)).toMatchObject({ total: 2, documents: [{ status: 'queued' }, { status: 'queued' }] });
    await eventually(
      async () => (await documents()).filter((document) => document.status === 'indexed').length === 3,
      30_000,
      'three documents indexed',
    );
    expect(await leftovers(`${prefix()}:upload:*`)).toEqual([]);
  });
});
