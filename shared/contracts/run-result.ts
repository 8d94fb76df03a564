import type { ErrorRecord } from './errors.js';
import {
  contentText,
  type Message,
  type RunRecord,
  type RunStatus,
  type StepRecord,
  type Usage,
} from './run-record.js';

/** One tool call the run made, and what the model was told of it. */
export interface ToolExecution {
  toolCallId: string;
  /** The tool's name, as the model called it. */
  name: string;
  /** The arguments, as the model sent them (JSON text). */
  arguments: string;
  /** The tool message's content; null while the call has no result (a run cancelled or waiting mid-call). */
  result: string | null;
}

/**
 * What one run produced, in one object (AiServices' `Result`): its answer, every tool execution, the
 * model's responses before the final one, the sources it cited or was given, and why the model's last
 * response ended. Built from the run's record, its own messages (a conversation's earlier turns left
 * out) and its steps (`buildRunResult`); served by `GET /v1/runs/:id/result` and `client.result(id)`.
 */
export interface RunResult {
  runId: string;
  status: RunStatus;
  graph: string;
  /** The run's output (null until it completes). */
  output: unknown;
  /** `output.answer` when it is a string, else the final assistant message's text; null without either. */
  answer: string | null;
  /** Why the model's last response ended (`stop`, `length`, `tool_calls`, `content_filter`, `refusal`, `other`); null without a model call. */
  finishReason: string | null;
  /** Every tool call of the run, in the order the model made them. */
  toolExecutions: ToolExecution[];
  /** The model's responses before its final one (each with its tool calls, and any text). */
  intermediateResponses: Message[];
  /** `output.sources` (rag-agent's citations, react-agent's retrieved passages); [] without. */
  sources: unknown[];
  usage: Usage;
  error: ErrorRecord | null;
}

/**
 * The result of a run from its record, the messages it appended itself (without a conversation's seeded
 * turns) and its steps.
 */
export function buildRunResult(
  record: RunRecord,
  ownMessages: readonly Message[],
  steps: readonly StepRecord[],
): RunResult {
  const toolExecutions: ToolExecution[] = [];
  const byId = new Map<string, ToolExecution>();
  const responses: Message[] = [];
  for (const message of ownMessages) {
    if (message.role === 'assistant') {
      responses.push(message);
      for (const call of message.tool_calls ?? []) {
        const execution = {
          toolCallId: call.id,
          name: call.function.name,
          arguments: call.function.arguments,
          result: null,
        };
        toolExecutions.push(execution);
        byId.set(call.id, execution);
      }
    } else if (message.role === 'tool' && message.tool_call_id) {
      const execution = byId.get(message.tool_call_id);
      if (execution) execution.result = contentText(message.content);
    }
  }
  const final = responses.at(-1);
  const finalIsAnswer = final !== undefined && !final.tool_calls?.length;
  const output = record.output as { answer?: unknown; sources?: unknown } | null;
  const finishReason = [...steps].reverse().find((step) => step.usage?.finishReason)?.usage?.finishReason ?? null;
  return {
    runId: record.id,
    status: record.status,
    graph: record.graph,
    output: record.output,
    answer:
      typeof output?.answer === 'string' ? output.answer : finalIsAnswer ? contentText(final.content) || null : null,
    finishReason,
    toolExecutions,
    intermediateResponses: finalIsAnswer ? responses.slice(0, -1) : responses,
    sources: Array.isArray(output?.sources) ? output.sources : [],
    usage: record.usage,
    error: record.error,
  };
}
