import { z } from 'zod';

const serverName = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'MCP server names are 1-64 characters of letters, digits, "_" or "-"');

/** An MCP server the worker starts itself and talks to over stdin/stdout. */
const stdioMcpServerSchema = z
  .object({
    command: z.string().min(1),
    args: z.array(z.string()).max(256).default([]),
    /** Variables for the server's process (besides PATH, HOME and the like, which it always gets). */
    env: z.record(z.string(), z.string()).optional(),
    cwd: z.string().min(1).optional(),
  })
  .strict();

/** An MCP server reached over streamable HTTP. */
const httpMcpServerSchema = z
  .object({
    url: z.url({ protocol: /^https?$/, error: 'url must be an absolute http:// or https:// URL' }),
    headers: z.record(z.string(), z.string()).optional(),
  })
  .strict();

const mcpServerSchema = z.union([stdioMcpServerSchema, httpMcpServerSchema]);
export type McpServerConfig = z.input<typeof mcpServerSchema>;

/**
 * `AGENTQ_MCP_SERVERS` and `startWorker({ mcpServers })`: MCP servers by name, e.g.
 * `{"files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/data"]}, "search": {"url": "http://localhost:8808/mcp"}}`.
 */
export const mcpServersSchema = z.record(serverName, mcpServerSchema);
export type McpServers = z.input<typeof mcpServersSchema>;
