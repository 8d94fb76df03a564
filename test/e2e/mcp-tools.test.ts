import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { validateHistory } from '../../shared/contracts/validate-history.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { startWorker } from '../../worker/start-worker.js';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { nodeEntry } from '../helpers/node-entry.js';
import { startTestEnv, testConfig, type TestEnv } from '../helpers/test-env.js';

const mcpServer = (env: Record<string, string> = {}) => ({
  command: process.execPath,
  args: [nodeEntry('test/fakes/mcp-stdio-server.ts')],
  env,
});

/** Tools of an MCP server (stdio, the official SDK on both sides) called by react-agent like local tools. */
describe('MCP tools', () => {
  let server: ScriptedOpenAIServer;
  let env: TestEnv;
  let dir: string;
  let callLog: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agentq-mcp-'));
    callLog = join(dir, 'calls.log');
    server = await startScriptedOpenAIServer();
    env = await startTestEnv({
      env: {
        OPENAI_BASE_URL: server.url,
        OPENAI_API_KEY: 'test-key',
        LLM_MODEL: 'scripted-chat',
        AGENTQ_MCP_CONNECT_TIMEOUT_MS: '20000',
      },
      mcpServers: { testing: mcpServer({ MCP_CALL_LOG: callLog }) },
    });
  }, 30_000);
  afterAll(async () => {
    await env?.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => server.reset());

  const calls = () => readFileSync(callLog, 'utf8').trim().split('\n');

  it("offers the server's tools with their JSON schemas and runs their calls as tool steps", async () => {
    server.setScript([
      {
        toolCalls: [
          { name: 'add', arguments: { a: 2, b: 3 } },
          { name: 'always_fails', arguments: {} },
          { name: 'add', arguments: { a: 'two' } },
        ],
      },
      { content: '2 + 3 = 5' },
    ]);
    const queued = await env.client.enqueue({
      graph: 'react-agent',
      input: { query: 'add 2 and 3', tools: ['add', 'always_fails'] },
    });
    const done = await env.client.wait(queued.id, { timeoutMs: 30_000 });
    expect(done).toMatchObject({ status: 'completed', output: { answer: '2 + 3 = 5' } });
    const offered = (server.chatRequests()[0]!.body.tools ?? []) as {
      function: { name: string; parameters: Record<string, unknown> };
    }[];
    expect(offered.map((tool) => tool.function.name)).toEqual(['add', 'always_fails']);
    expect(offered[0]!.function.parameters).toMatchObject({
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
      required: ['a', 'b'],
    });

    const history = await env.client.messages(done.id);
    expect(validateHistory(history)).toEqual([]);
    const results = history.filter((message) => message.role === 'tool').map((message) => message.content);
    expect(results[0]).toBe('5');
    expect(results[1]).toBe("Error: tool 'always_fails' failed: the disk is full");
    // Arguments are checked against the server's schema before any call reaches it.
    expect(results[2]).toMatch(/^Error: invalid arguments for tool 'add'/);
    // The calls are sibling tool steps of one superstep: they reach the server in any order.
    expect([...calls()].sort()).toEqual(['add 2 3', 'always_fails']);
    expect((await env.client.steps(done.id)).filter((step) => step.node === 'tool')).toHaveLength(3);
  });

  it('a server that will not start, or answers garbage, stops the worker start with an error naming it', async () => {
    const logger = createLogger('silent');
    await expect(
      startWorker({
        config: testConfig(),
        logger,
        reconciler: false,
        mcpServers: { broken: { command: '/nonexistent/mcp-server' } },
      }),
    ).rejects.toThrow(/MCP server 'broken' \(command \/nonexistent\/mcp-server\) could not be used/);
    const garbage = {
      command: process.execPath,
      args: ['-e', "process.stdout.write('hello, not json\\n'); setInterval(() => {}, 1000)"],
    };
    await expect(
      startWorker({
        config: testConfig({ AGENTQ_MCP_CONNECT_TIMEOUT_MS: '1500' }),
        logger,
        reconciler: false,
        mcpServers: { chatty: garbage },
      }),
    ).rejects.toThrow(/MCP server 'chatty' .* could not be used/);
    await expect(
      startWorker({
        config: testConfig(),
        logger,
        reconciler: false,
        mcpServers: { 'bad name!': { url: 'http://127.0.0.1:1/mcp' } },
      }),
    ).rejects.toThrow(/mcpServers/);
    expect(() => testConfig({ AGENTQ_MCP_SERVERS: '{"x": {"command": ""}}' })).toThrow(/AGENTQ_MCP_SERVERS/);
  }, 30_000);

  it('a worker start that fails after its MCP servers connected closes them: the stdio server process ends', async () => {
    const pidFile = join(dir, 'server.pid');
    // Connected first, then Redis is found unreachable (nothing listens on port 1).
    const config = testConfig({ REDIS_URL: 'redis://127.0.0.1:1', AGENTQ_MCP_CONNECT_TIMEOUT_MS: '20000' });
    await expect(
      startWorker({
        config,
        logger: createLogger('silent'),
        reconciler: false,
        mcpServers: { testing: mcpServer({ MCP_PID_FILE: pidFile }) },
      }),
    ).rejects.toThrow(/redis/i);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(pid).toBeGreaterThan(0);
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    // The SDK's close ends the child (stdin closed, then signals): polled, not timed.
    const deadline = Date.now() + 10_000;
    while (alive() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(alive()).toBe(false);
  }, 40_000);
});
