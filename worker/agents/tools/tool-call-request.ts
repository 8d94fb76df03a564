import type { ToolCall } from '../../../shared/ports/language-model.js';

/**
 * What a tool call asks, for time travel's recording and replay (`memo`'s `request`): the tool
 * and its arguments (parsed when they are JSON, so a replay's diff shows the argument that changed).
 */
export function toolCallRequest(call: ToolCall): { tool: string; arguments: unknown } {
  let args: unknown = call.function.arguments;
  try {
    args = JSON.parse(call.function.arguments);
  } catch {
    // Kept as sent: the replay compares the text.
  }
  return { tool: call.function.name, arguments: args };
}
