/**
 * The response shapes the provider's contract allows that are not a plain answer, as scripted answers
 * of the scripted OpenAI server. Each is served to a streamed request (events, or JSON where noted) and
 * to a non-streamed one (a `chat.completion` body), so tests can run every shape both ways and a
 * conformance test can check what the server sends against the published schemas.
 */
import type { ScriptedMessage } from './scripted-chat-completion.js';

export interface ScriptedResponseShape {
  /** A stable name, e.g. `refusal`. */
  name: string;
  /** What the shape is, in a few words. */
  description: string;
  response: ScriptedMessage;
}

/** The tool a legacy `function_call` and a `custom` call of these shapes name (a worker's built-in tool). */
export const SHAPE_TOOL = 'calculator';

export const RESPONSE_SHAPES = [
  {
    name: 'json-to-stream',
    description: 'a streamed request answered with a whole application/json chat.completion',
    response: { content: 'The answer, as one JSON body.', asJson: true },
  },
  {
    name: 'refusal',
    description: 'message.refusal (delta.refusal when streamed), no content',
    response: { refusal: "I'm sorry, but I can't help with that request." },
  },
  {
    name: 'content-filter-empty',
    description: 'finish_reason content_filter with no text',
    response: { content: null, finishReason: 'content_filter' },
  },
  {
    name: 'length-empty',
    description: 'finish_reason length with no text',
    response: { content: '', finishReason: 'length' },
  },
  {
    name: 'empty',
    description: 'no text, no tool call, no refusal, finish_reason stop',
    response: { content: '' },
  },
  {
    name: 'custom-tool-call',
    description: 'a lone tool call of type custom (a streamed request gets it as JSON)',
    response: { toolCalls: [{ type: 'custom', name: SHAPE_TOOL, arguments: '2+3' }] },
  },
  {
    name: 'legacy-function-call',
    description: 'a legacy message.function_call (delta.function_call when streamed), finish_reason function_call',
    response: { functionCall: { name: SHAPE_TOOL, arguments: { expression: '2+3' } } },
  },
] as const satisfies readonly ScriptedResponseShape[];

export type ResponseShapeName = (typeof RESPONSE_SHAPES)[number]['name'];

/** The shape of this name (a copy, so a test may change it). */
export function responseShape(name: ResponseShapeName): ScriptedMessage {
  const shape = RESPONSE_SHAPES.find((candidate) => candidate.name === name)!;
  return structuredClone(shape.response) as ScriptedMessage;
}
