import { randomUUID } from 'node:crypto';
import type { NodeContext } from '../../../shared/graph/node-context.js';
import type {
  LanguageModel,
  LanguageModelRequest,
  LanguageModelResponse,
} from '../../../shared/ports/language-model.js';

/** The request as sent to the model port: messages, tools, model settings (no signal, no stream callbacks). */
export type ModelRequestPayload = Omit<LanguageModelRequest, 'abortSignal' | 'onTextDelta' | 'onToolCallDelta'>;

/** Which call an event is about: one fresh model request of one step attempt. */
export interface ModelCallInfo {
  /** The same in the request event and in its response or error event. */
  callId: string;
  runId: string;
  tenant: string;
  node: string;
  stepId: string;
  attempt: number;
  /** The provider and model asked (`gen_ai.provider.name`, `gen_ai.request.model`). */
  provider: string;
  model: string;
  request: ModelRequestPayload;
}

export interface ModelResponseEvent extends ModelCallInfo {
  /** As the port returned it: the message, usage (undefined when the provider sent none), finishReason, model. */
  response: LanguageModelResponse;
  durationMs: number;
}

export interface ModelErrorEvent extends ModelCallInfo {
  /** What the call threw (an `AgentqError` with a code for provider errors, or the abort's reason). */
  error: unknown;
  durationMs: number;
}

/**
 * In-process listeners of model calls (AiServices' ChatModelListener), given to the worker as
 * `services.modelListeners`: each fresh request, its response or its error, with the payloads and the
 * error object. A response saved by an earlier attempt is not requested again, so it is not heard
 * again. Listeners observe: what they return is ignored, a promise is not awaited, and what they throw is
 * logged and dropped — a listener never fails, slows or changes a run.
 */
export interface ModelListener {
  onRequest?(event: ModelCallInfo): unknown;
  onResponse?(event: ModelResponseEvent): unknown;
  onError?(event: ModelErrorEvent): unknown;
}

/** `call()`, the model request, with the context's listeners told before and after. */
export async function observeModelCall<T extends LanguageModelResponse>(
  context: NodeContext,
  model: LanguageModel,
  request: LanguageModelRequest,
  call: () => Promise<T>,
): Promise<T> {
  const listeners = context.services.modelListeners ?? [];
  if (listeners.length === 0) return call();
  const { abortSignal: _signal, onTextDelta: _text, onToolCallDelta: _tool, ...payload } = request;
  const info: ModelCallInfo = {
    callId: randomUUID(),
    runId: context.runId,
    tenant: context.tenant,
    node: context.node,
    stepId: context.stepId,
    attempt: context.attempt,
    provider: model.provider,
    model: request.model ?? model.modelId,
    request: payload,
  };
  const tell = (method: keyof ModelListener, event: ModelCallInfo) => {
    for (const listener of listeners) {
      try {
        const returned = (listener[method] as ((event: ModelCallInfo) => unknown) | undefined)?.call(listener, event);
        if (returned instanceof Promise) returned.catch((error: unknown) => warn(context, method, error));
      } catch (error) {
        warn(context, method, error);
      }
    }
  };
  tell('onRequest', info);
  const started = Date.now();
  try {
    const response = await call();
    tell('onResponse', { ...info, response, durationMs: Date.now() - started } as ModelResponseEvent);
    return response;
  } catch (error) {
    tell('onError', { ...info, error, durationMs: Date.now() - started } as ModelErrorEvent);
    throw error;
  }
}

function warn(context: NodeContext, method: string, error: unknown): void {
  context.logger.warn(
    { runId: context.runId, err: error instanceof Error ? error.message : String(error) },
    `model listener ${method} failed (ignored)`,
  );
}
