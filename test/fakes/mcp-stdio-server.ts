/**
 * A small MCP server over stdio for tests: `node --import tsx test/fakes/mcp-stdio-server.ts`. Tools:
 * `add` (two numbers), `shout` (a text, upper-cased), `always_fails` (an MCP error result). Each call
 * is appended to the file named by MCP_CALL_LOG, when set, so a test can count executions; the
 * process id is written to MCP_PID_FILE, when set, so a test can see the process end.
 */
import { appendFileSync, writeFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const log = (line: string) => {
  if (process.env.MCP_CALL_LOG) appendFileSync(process.env.MCP_CALL_LOG, `${line}\n`);
};

const server = new McpServer({ name: 'agentq-test-mcp', version: '1.0.0' });
server.registerTool(
  'add',
  { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() } },
  ({ a, b }) => {
    log(`add ${a} ${b}`);
    return { content: [{ type: 'text', text: String(a + b) }] };
  },
);
server.registerTool('shout', { description: 'Upper-cases a text', inputSchema: { text: z.string() } }, ({ text }) => {
  log(`shout ${text}`);
  return { content: [{ type: 'text', text: text.toUpperCase() }] };
});
server.registerTool('always_fails', { description: 'Fails every time', inputSchema: {} }, () => {
  log('always_fails');
  return { isError: true, content: [{ type: 'text', text: 'the disk is full' }] };
});
if (process.env.MCP_PID_FILE) writeFileSync(process.env.MCP_PID_FILE, String(process.pid));
await server.connect(new StdioServerTransport());
