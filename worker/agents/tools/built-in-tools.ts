import type { AnyTool } from '../../../shared/ports/define-tool.js';
import { calculatorTool } from './calculator.js';
import { currentTimeTool } from './current-time.js';

/** The tools every agentq worker offers unless told otherwise. */
export function builtInTools(): AnyTool[] {
  return [calculatorTool, currentTimeTool];
}
