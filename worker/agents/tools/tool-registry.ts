import { AgentqError } from '../../../shared/contracts/errors.js';
import type { AnyTool } from '../../../shared/ports/define-tool.js';

/** The tools a worker offers to agents, by name. */
export class ToolRegistry {
  private readonly tools = new Map<string, AnyTool>();

  constructor(tools: readonly AnyTool[] = []) {
    for (const tool of tools) this.register(tool);
  }

  /** Adds a tool; a second tool with the same name is an error (say which one wins by registering only it). */
  register(tool: AnyTool): this {
    if (this.tools.has(tool.name)) {
      throw new AgentqError(
        'INVALID_INPUT',
        `tool '${tool.name}' is registered twice; tool names must be unique (a user tool cannot silently replace a built-in one)`,
      );
    }
    this.tools.set(tool.name, tool);
    return this;
  }

  get(name: string): AnyTool | undefined {
    return this.tools.get(name);
  }

  names(): string[] {
    return [...this.tools.keys()];
  }

  list(): AnyTool[] {
    return [...this.tools.values()];
  }

  /**
   * The tools a run may use: `names` in order, or every registered tool when `names` is undefined.
   * An unknown name is the run's input error (non-retryable), named with the tools that exist.
   */
  select(names: readonly string[] | undefined): AnyTool[] {
    if (names === undefined) return this.list();
    const unknown = names.filter((name) => !this.tools.has(name));
    if (unknown.length > 0) {
      throw new AgentqError(
        'INVALID_INPUT',
        `unknown tool${unknown.length > 1 ? 's' : ''} ${unknown.map((name) => `'${name}'`).join(', ')} in the run's input; this worker has: ${this.names().join(', ') || 'no tools'}`,
      );
    }
    return [...new Set(names)].map((name) => this.tools.get(name)!);
  }
}
