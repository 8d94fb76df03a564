/**
 * The local embedder's thread (started by local-embedder.ts from this module's compiled file). The
 * packages are resolved by the parent (local-model-paths.ts), so the thread finds them wherever agentq
 * is installed. TF.js's WebAssembly backend is the one @energetic-ai/core registers.
 * The thread does what the package's EmbeddingsModel.embed does (sparse token ids in, one vector per
 * text out) with each text tokenized once (embed() tokenizes again what we had to tokenize to count)
 * and only up to the tokens the model reads: the tokenizer marks every space as the start of a new
 * token (no token of its vocabulary holds one elsewhere), so the first n space-separated words give at
 * least n tokens and the same first tokens as the whole text.
 */
import { readlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';

/** What the thread is started with: the packages' resolved paths, and a niceness for the thread (0 none). */
export interface LocalEmbeddingThreadData {
  embeddings: string;
  weights: string;
  core: string;
  nice: number;
}

interface Tensor {
  array(): Promise<number[][]>;
  dispose(): void;
}

interface LoadedModel {
  tokenizer: { encode(text: string): number[] };
  model: { executeAsync(inputs: { indices: Tensor; values: Tensor }): Promise<Tensor> };
}

interface Core {
  tensor2d(values: number[][], shape: [number, number], dtype: 'int32'): Tensor;
  tensor1d(values: number[], dtype: 'int32'): Tensor;
}

const port = parentPort!;
const data = workerData as LocalEmbeddingThreadData;
const require = createRequire(import.meta.url);

if (data.nice) {
  // Linux names a thread's own id under /proc/thread-self (pid/task/tid); setpriority on it lowers only this thread.
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (tid > 0) setPriority(tid, data.nice);
  } catch {
    // Not Linux, or not allowed: the thread runs at the process's priority.
  }
}

let model: Promise<LoadedModel> | undefined;
let core: Core;

function load(): Promise<LoadedModel> {
  return (model ??= (async () => {
    const { initModel } = require(data.embeddings) as { initModel(source: unknown): Promise<LoadedModel> };
    const { modelSource } = require(data.weights) as { modelSource: unknown };
    core = require(data.core) as Core;
    return initModel(modelSource);
  })());
}

function encode(loaded: LoadedModel, text: string, maxTokens: number): number[] {
  const words = text.split(' ');
  return loaded.tokenizer
    .encode(words.length > maxTokens ? words.slice(0, maxTokens).join(' ') : text)
    .slice(0, maxTokens);
}

async function run(loaded: LoadedModel, encodings: number[][]): Promise<number[][]> {
  const indices: number[][] = [];
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
}

port.on('message', async ({ id, texts, maxTokens }: { id: number; texts: string[]; maxTokens: number }) => {
  try {
    const loaded = await load();
    const encodings = texts.map((text) => encode(loaded, text, maxTokens));
    const tokens = encodings.map((ids) => ids.length);
    // A batch without a single token (only empty texts) is a tensor shape the model refuses: one word more, its vector dropped.
    const vectors = (
      await run(
        loaded,
        tokens.some((count) => count > 0) ? encodings : [...encodings, encode(loaded, 'text', maxTokens)],
      )
    ).slice(0, texts.length);
    const dimensions = vectors[0]!.length;
    const flat = new Float32Array(texts.length * dimensions);
    vectors.forEach((vector, row) => flat.set(vector, row * dimensions));
    port.postMessage({ id, ok: true, count: texts.length, dimensions, flat, tokens }, [flat.buffer]);
  } catch (error) {
    model = undefined;
    port.postMessage({ id, ok: false, message: String((error as Error | undefined)?.message || error) });
  }
});
