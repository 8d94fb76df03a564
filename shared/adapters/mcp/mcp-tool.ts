import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { z } from 'zod';
import { AgentqError } from '../../contracts/errors.js';
import type { AnyTool } from '../../ports/define-tool.js';

/** A tool as an MCP server lists it (`tools/list`). */
interface McpToolListing {
  name: string;
  description?: string | undefined;
  inputSchema: Record<string, unknown>;
}

const NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * An MCP server's tool as an agentq tool: the model sees the server's own JSON Schema, arguments are
 * checked against it (a zod schema made from it) before the call, and the call runs in the same tool
 * step as a local tool (memo, retries, onToolError). A result with `isError` is the tool's failure.
 */
export function mcpTool(server: string, client: Client, listing: McpToolListing, timeoutMs: number): AnyTool {
  if (!NAME_PATTERN.test(listing.name)) {
    throw new AgentqError(
      'INVALID_INPUT',
      `MCP server '${server}': tool name '${listing.name}' is not a valid function name (1-64 letters, digits, '_' or '-')`,
    );
  }
  const parameters = { ...listing.inputSchema, type: 'object' };
  delete (parameters as Record<string, unknown>).$schema;
  let input: z.ZodType;
  try {
    input = z.fromJSONSchema(parameters as Parameters<typeof z.fromJSONSchema>[0]);
  } catch {
    // A schema zod cannot read: the server checks its own arguments.
    input = z.record(z.string(), z.unknown());
  }
  const description = listing.description?.trim() || `Tool '${listing.name}' of the MCP server '${server}'`;
  return Object.freeze({
    name: listing.name,
    description,
    input,
    parameters,
    describe: () => ({ name: listing.name, description, parameters }),
    execute: async (args: unknown, { abortSignal }: { abortSignal: AbortSignal }) => {
      let result: Awaited<ReturnType<Client['callTool']>>;
      try {
        result = await client.callTool({ name: listing.name, arguments: args as Record<string, unknown> }, undefined, {
          signal: abortSignal,
          timeout: timeoutMs,
        });
      } catch (error) {
        if (abortSignal.aborted) throw error;
        // A transport failure or timeout may pass: worth another attempt of the step.
        throw new AgentqError(
          'TOOL_ERROR',
          `MCP server '${server}' did not answer the call of '${listing.name}': ${(error as Error).message}`,
          { retryable: true, cause: error },
        );
      }
      const text = textOf(result.content);
      if (result.isError) throw new AgentqError('TOOL_ERROR', text || `MCP tool '${listing.name}' reported an error`);
      return result.structuredContent !== undefined && text === '' ? result.structuredContent : text;
    },
  });
}

function textOf(content: unknown): string {
  if (!Array.isArray(content)) return '';
  return content
    .map((part: { type?: string; text?: string }) => (part.type === 'text' ? (part.text ?? '') : JSON.stringify(part)))
    .join('\n');
}
