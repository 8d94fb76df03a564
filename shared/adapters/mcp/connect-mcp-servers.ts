import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { z } from 'zod';
import { AgentqError } from '../../contracts/errors.js';
import type { Logger } from '../../telemetry/logger.js';
import { mcpServersSchema, type McpServers } from '../../config/mcp-servers-schema.js';
import type { AnyTool } from '../../ports/define-tool.js';
import { mcpTool } from './mcp-tool.js';

export interface McpConnections {
  /** Every server's tools, ready to register beside the local ones. */
  tools: AnyTool[];
  close(): Promise<void>;
}

interface ConnectMcpServersOptions {
  logger: Logger;
  /** A server that has not finished its handshake and tool listing by then fails the start. @default 10000 */
  connectTimeoutMs?: number;
  /** One tool call's limit. @default 60000 */
  callTimeoutMs?: number;
}

/**
 * Connects to every MCP server (stdio or streamable HTTP, the official SDK's client) and lists its
 * tools. All or nothing: a server that will not start, does not speak MCP, or lists a tool whose name
 * another server or tool already has, fails with an error naming the server, and every connection
 * already made is closed — a worker never starts with half its tools.
 */
export async function connectMcpServers(
  servers: McpServers,
  { logger, connectTimeoutMs = 10_000, callTimeoutMs = 60_000 }: ConnectMcpServersOptions,
): Promise<McpConnections> {
  const parsed = mcpServersSchema.safeParse(servers);
  if (!parsed.success) throw new AgentqError('INVALID_INPUT', `mcpServers: ${z.prettifyError(parsed.error)}`);
  const clients: Client[] = [];
  const close = async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
  };
  const tools: AnyTool[] = [];
  const entries = Object.entries(parsed.data);
  // The SDK (and the JSON-schema machinery it brings) is loaded only by a worker that has servers:
  // most have none, and would pay for it before their first step.
  if (entries.length === 0) return { tools, close };
  const [{ Client }, { getDefaultEnvironment, StdioClientTransport }, { StreamableHTTPClientTransport }] =
    await Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      import('@modelcontextprotocol/sdk/client/stdio.js'),
      import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    ]);
  try {
    for (const [name, config] of entries) {
      const client = new Client({ name: 'agentq', version: '1' });
      clients.push(client);
      const transport: Transport =
        'command' in config
          ? new StdioClientTransport({
              command: config.command,
              args: config.args,
              env: { ...getDefaultEnvironment(), ...config.env },
              ...(config.cwd ? { cwd: config.cwd } : {}),
              stderr: 'ignore',
            })
          : new StreamableHTTPClientTransport(
              new URL(config.url),
              config.headers ? { requestInit: { headers: config.headers } } : undefined,
            );
      let listed: Awaited<ReturnType<Client['listTools']>>['tools'];
      try {
        await client.connect(transport, { timeout: connectTimeoutMs });
        listed = [];
        let cursor: string | undefined;
        do {
          const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: connectTimeoutMs });
          listed.push(...page.tools);
          cursor = page.nextCursor;
        } while (cursor);
      } catch (error) {
        throw new AgentqError(
          'UNAVAILABLE',
          `MCP server '${name}' (${'command' in config ? `command ${config.command}` : config.url}) could not be used: ${(error as Error).message}`,
          { cause: error },
        );
      }
      for (const listing of listed) {
        if (tools.some((tool) => tool.name === listing.name)) {
          throw new AgentqError(
            'INVALID_INPUT',
            `MCP server '${name}' lists tool '${listing.name}', which another MCP server already offers; tool names must be unique`,
          );
        }
        tools.push(mcpTool(name, client, listing as Parameters<typeof mcpTool>[2], callTimeoutMs));
      }
      logger.info({ mcpServer: name, tools: listed.map((tool) => tool.name) }, 'MCP server connected');
    }
  } catch (error) {
    await close();
    throw error;
  }
  return { tools, close };
}
