import { AgentqError } from '../../../shared/contracts/errors.js';
import type { NodeContext } from '../../../shared/graph/node-context.js';
import type { LanguageModelRequest } from '../../../shared/ports/language-model.js';

/** A model request as a transformer sees and returns it: plain JSON, without the step's signal and stream callbacks. */
export type ChatRequest = Omit<LanguageModelRequest, 'abortSignal' | 'onTextDelta' | 'onToolCallDelta'>;

/** Who asks: the run, its conversation and the node, so a transformer can vary by any of them. */
export interface ChatRequestInfo {
  runId: string;
  tenant: string;
  /** The run's conversation (`conversationId` of its enqueue); absent for a lone run, a replay or a fork. */
  conversationId?: string;
  /** The run's graph id (`name@version`), when the context knows it. */
  graph?: string;
  node: string;
  /** The step, e.g. `s3.t0`. */
  stepId: string;
  /** The call within the step (its memo key): `model`, `summary`, `object`, … */
  call: string;
}

/**
 * Rewrites each model request before it is sent (AiServices' `chatRequestTransformer`): it may change the
 * messages, the tools and the parameters, and returns the request to send, at once or as a promise. What it
 * returns is what the provider receives, what the step's memo and the run's recording keep, and what a
 * replay compares, so it should give the same request for the same input: it runs on every attempt of the
 * step, also when the answer was saved by an earlier one. A throw fails the step with
 * CHAT_REQUEST_TRANSFORM_FAILED (an `AgentqError` it throws is kept as it is).
 */
export type ChatRequestTransformer = (
  request: ChatRequest,
  info: ChatRequestInfo,
) => ChatRequest | Promise<ChatRequest>;

/** The request `context`'s transformer makes of `request` (itself when the worker and the graph set none). */
export async function transformChatRequest(
  context: NodeContext,
  request: ChatRequest,
  call: string,
): Promise<ChatRequest> {
  const transformer = context.services.chatRequestTransformer;
  if (!transformer) return request;
  const info: ChatRequestInfo = {
    runId: context.runId,
    tenant: context.tenant,
    ...(context.conversationId === undefined ? {} : { conversationId: context.conversationId }),
    ...(context.graph === undefined ? {} : { graph: context.graph }),
    node: context.node,
    stepId: context.stepId,
    call,
  };
  let transformed: unknown;
  try {
    // A copy: a transformer that edits the request in place cannot change the caller's state.
    transformed = await transformer(structuredClone(request), info);
  } catch (error) {
    if (AgentqError.isInstance(error)) throw error;
    throw new AgentqError(
      'CHAT_REQUEST_TRANSFORM_FAILED',
      `the chat request transformer threw on node '${context.node}' (call '${call}'): ${error instanceof Error ? error.message : String(error)}`,
      { cause: error, details: { node: context.node, call } },
    );
  }
  const messages = (transformed as Partial<ChatRequest> | null)?.messages;
  if (typeof transformed !== 'object' || transformed === null || !Array.isArray(messages) || messages.length === 0)
    throw new AgentqError(
      'CHAT_REQUEST_TRANSFORM_FAILED',
      `the chat request transformer returned no request with messages on node '${context.node}' (call '${call}'); return the request it was given, changed`,
      { details: { node: context.node, call } },
    );
  return transformed as ChatRequest;
}

/**
 * A graph's own transformer, for its nodes: `const node = transformingNodes(options.chatRequestTransformer)`,
 * then `.node('model', node(modelNode))`. Each node so wrapped sees services whose transformer is the
 * graph's, then the worker's (`services.chatRequestTransformer`), so its model calls go through both.
 */
export function transformingNodes(
  transformer: ChatRequestTransformer | undefined,
): <State, Result>(
  node: (state: State, context: NodeContext) => Result,
) => (state: State, context: NodeContext) => Result {
  return (node) => (transformer ? (state, context) => node(state, contextWithTransformer(context, transformer)) : node);
}

function contextWithTransformer(context: NodeContext, transformer: ChatRequestTransformer): NodeContext {
  const worker = context.services.chatRequestTransformer;
  const chatRequestTransformer: ChatRequestTransformer = worker
    ? async (request, info) => worker(await transformer(request, info), info)
    : transformer;
  const services = { ...context.services, chatRequestTransformer };
  // A proxy rather than a copy: the engine's context is a class whose members are getters over its own fields.
  return new Proxy(context, {
    get: (target, property) => (property === 'services' ? services : Reflect.get(target, property, target)),
  });
}
