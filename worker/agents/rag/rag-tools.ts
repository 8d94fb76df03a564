import type { ToolCall, ToolDescription } from '../../../shared/ports/language-model.js';

/** The tools `rag-agent` offers its model (the reference design's three, and `plan` where the graph plans). */
export type RagToolName = 'search' | 'refine_and_search' | 'final_answer' | 'plan';

/** Sub-questions one plan may hold (each cut at MAX_QUERY_CHARS). @default 8 */
export const MAX_PLAN_STEPS = 8;

/** Longest search query the model may send (longer ones are cut: a query is a few words). */
const MAX_QUERY_CHARS = 1000;

const SEARCH: ToolDescription = {
  name: 'search',
  description:
    "Search the user's documents. Returns the best passages, each with an id to cite. Call it with a query derived from the question; independent searches may be called at once.",
  parameters: {
    type: 'object',
    properties: { query: { type: 'string', description: 'Keywords or a question' } },
    required: ['query'],
    additionalProperties: false,
  },
};

const REFINE_AND_SEARCH: ToolDescription = {
  name: 'refine_and_search',
  description:
    'Search again from another angle when the passages so far do not answer the question: other words, a name a passage mentions (the next hop of a multi-part question), a narrower or broader query.',
  parameters: {
    type: 'object',
    properties: {
      refined_query: { type: 'string', description: 'The reformulated query' },
      reason: { type: 'string', description: 'What the earlier results lacked' },
    },
    required: ['refined_query'],
    additionalProperties: false,
  },
};

const FINAL_ANSWER: ToolDescription = {
  name: 'final_answer',
  description:
    'Give the answer, using only what the retrieved passages say. Cite passages by id in the text, e.g. [3fa9c1], and list every cited id in `citations`.',
  parameters: {
    type: 'object',
    properties: {
      answer: { type: 'string', description: 'The answer, with [id] citations' },
      citations: { type: 'array', items: { type: 'string' }, description: 'Ids of the passages the answer rests on' },
    },
    required: ['answer', 'citations'],
    additionalProperties: false,
  },
};

const PLAN: ToolDescription = {
  name: 'plan',
  description:
    'Before searching a question with several parts, list the sub-questions to answer, in order. It is recorded (no search runs); then search for each.',
  parameters: {
    type: 'object',
    properties: {
      sub_questions: {
        type: 'array',
        items: { type: 'string' },
        description: `The sub-questions, at most ${MAX_PLAN_STEPS}`,
      },
    },
    required: ['sub_questions'],
    additionalProperties: false,
  },
};

/**
 * The tools for the next model call: all three while search rounds are left, then only `final_answer`;
 * `plan` first while `planning` is on and nothing is planned yet.
 */
export function ragTools({
  searchesLeft,
  planning = false,
}: {
  searchesLeft: boolean;
  planning?: boolean;
}): ToolDescription[] {
  if (!searchesLeft) return [FINAL_ANSWER];
  return [...(planning ? [PLAN] : []), SEARCH, REFINE_AND_SEARCH, FINAL_ANSWER];
}

/** A model's tool call, understood. */
export type RagToolCall =
  | { kind: 'search'; callId: string; tool: 'search' | 'refine_and_search'; query: string; arguments: string }
  | { kind: 'final'; callId: string; answer: string; citations: string[] }
  | { kind: 'plan'; callId: string; steps: string[] }
  | { kind: 'invalid'; callId: string; tool: string; error: string };

/**
 * Reads a tool call of the model. A malformed call is `invalid` with a message for the model (sent
 * back as the tool's result), never an exception: the model can correct itself.
 */
export function parseRagToolCall(call: ToolCall): RagToolCall {
  const { id: callId } = call;
  const tool = call.function.name;
  let args: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(call.function.arguments || '{}');
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
    args = parsed as Record<string, unknown>;
  } catch {
    return {
      kind: 'invalid',
      callId,
      tool,
      error: `Error: the arguments of '${tool}' are not a JSON object: ${call.function.arguments.slice(0, 200)}`,
    };
  }
  if (tool === 'search' || tool === 'refine_and_search') {
    // Models mix the two argument names up; either is accepted for either tool.
    const query = [args.refined_query, args.query].find(
      (value): value is string => typeof value === 'string' && value.trim().length > 0,
    );
    if (!query)
      return {
        kind: 'invalid',
        callId,
        tool,
        error: `Error: '${tool}' needs a non-empty ${tool === 'search' ? "'query'" : "'refined_query'"} string`,
      };
    return {
      kind: 'search',
      callId,
      tool,
      query: query.trim().slice(0, MAX_QUERY_CHARS),
      arguments: JSON.stringify(tool === 'search' ? { query: query.trim() } : { refined_query: query.trim() }),
    };
  }
  if (tool === 'final_answer') {
    if (typeof args.answer !== 'string')
      return { kind: 'invalid', callId, tool, error: "Error: 'final_answer' needs an 'answer' string" };
    const citations = Array.isArray(args.citations)
      ? args.citations.filter((value): value is string => typeof value === 'string')
      : [];
    return { kind: 'final', callId, answer: args.answer, citations };
  }
  if (tool === 'plan') {
    const steps = (Array.isArray(args.sub_questions) ? args.sub_questions : [])
      .filter((value): value is string => typeof value === 'string' && value.trim().length > 0)
      .map((step) => step.trim().slice(0, MAX_QUERY_CHARS));
    if (steps.length === 0)
      return {
        kind: 'invalid',
        callId,
        tool,
        error: "Error: 'plan' needs 'sub_questions', a non-empty list of strings",
      };
    return { kind: 'plan', callId, steps: steps.slice(0, MAX_PLAN_STEPS) };
  }
  return {
    kind: 'invalid',
    callId,
    tool,
    error: `Error: there is no tool named '${tool}'. Available tools: search, refine_and_search, final_answer.`,
  };
}
