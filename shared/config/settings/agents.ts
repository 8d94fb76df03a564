// Setting declarations: read shared/config/settings/all-settings.ts first (how to add one).
import { choice, decimal, flag, integer, parsed, type Read } from '../setting-builders.js';
import { defineArea, type AreaConfig } from '../settings-area.js';
import { mcpServersSchema, type McpServers } from '../mcp-servers-schema.js';

const HOST = /^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$|^\[?[0-9a-f:.]+\]?$/;

/** Host names separated by commas, lower-cased; each one that is not a host name is named. */
function readHosts(value: string): Read<string[]> {
  const hosts = value
    .split(',')
    .map((item) => item.trim().toLowerCase())
    .filter(Boolean);
  const problems = hosts
    .filter((host) => !HOST.test(host))
    .map(
      (host) =>
        `'${host}' is not a host name: use names like docs.example.com or *.example.com (any subdomain), comma-separated`,
    );
  return problems.length > 0 ? { problems } : { value: hosts };
}

/** AGENTQ_MCP_SERVERS: JSON of servers by name, each refusal naming the field. */
function readMcpServers(value: string): Read<McpServers> {
  let json: unknown;
  try {
    json = JSON.parse(value.trim() === '' ? '{}' : value);
  } catch (error) {
    return {
      problems: [
        `not JSON (${(error as Error).message}): give {"<name>": {"command": "…", "args": […]}} or {"<name>": {"url": "http://…/mcp"}}`,
      ],
    };
  }
  const result = mcpServersSchema.safeParse(json);
  return result.success
    ? { value: result.data }
    : { problems: result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`) };
}

/** What agent nodes may do: tool rounds, tool results, memory, RAG, MCP servers and `http_fetch`. */
export const agentArea = defineArea({
  title: 'Agents and tools',
  intro:
    'Limits of the built-in agent graphs (`react-agent`, `rag-agent`, `reflect`, `multi-agent`) and the tools they are offered. The graphs’ own settings are also `AgentSettings` fields of the same names (`services.agentSettings`).',
  settings: {
    maxToolRounds: integer({
      env: 'AGENTQ_MAX_TOOL_ROUNDS',
      min: 1,
      default: 10,
      doc: 'Model responses with tool calls per agent run; then the model is asked once more, without tools, for a final answer (a model that still calls tools fails the run with `TOOL_ERROR`).',
    }),
    maxToolResultChars: integer({
      env: 'AGENTQ_MAX_TOOL_RESULT_CHARS',
      min: 200,
      default: 20_000,
      doc: 'A tool result longer than this is cut, ending with `…[truncated: N of M characters omitted]`.',
      when: 'Lower it for models with small context windows.',
    }),
    summarizeAt: decimal({
      env: 'AGENTQ_SUMMARIZE_AT',
      min: 0,
      max: 1,
      default: 0.75,
      doc: 'Agent graphs summarise older messages (their own step) when a prompt would exceed this share of the context window; 0 = never; a run’s `"memory": {"summarizeAt": x}` overrides it.',
    }),
    ragTopK: integer({
      env: 'AGENTQ_RAG_TOP_K',
      min: 1,
      max: 20,
      default: 6,
      doc: 'Passages of each `rag-agent` search the model reads, best first; a request’s `top_k` overrides it.',
    }),
    answerCacheTtlSeconds: integer({
      env: 'AGENTQ_ANSWER_CACHE_TTL_SECONDS',
      min: 1,
      default: 7 * 24 * 3600,
      shownDefault: '`604800` (7 days)',
      doc: 'How long a `rag-agent` answer stays in the answer cache (asked for with `answer_cache: true` on a run, `answerCache: true` on a batch); each new answer to the same question starts it again.',
    }),
    ragDenseWeight: decimal({
      env: 'AGENTQ_RAG_DENSE_WEIGHT',
      min: 0,
      max: 10,
      default: 2,
      doc: 'Weight of the extractive answerer’s dense sentence match with the local model; 0 = off.',
    }),
    ragReranker: choice({
      env: 'AGENTQ_RAG_RERANKER',
      values: ['none', 'lexical'],
      default: 'none',
      doc: 'The second-stage scorer of each `rag-agent` search’s best 10 hits: `lexical`, the built-in one (the question’s terms close together and its word pairs in order; offline, no model), or a reranker given as `services.reranker`; `none`: the search’s own order. Measured on the evaluation sets (docs/evaluation.md).',
    }),
    ragSources: choice({
      env: 'AGENTQ_RAG_SOURCES',
      values: ['all', 'cited'],
      default: 'all',
      doc: 'What a `rag-agent` answer’s `sources` lists: `all`, every document page the run retrieved, best relevance first, each marked `cited: true|false`; `cited`, only the cited ones, in citation order. A request’s `sources` overrides it.',
    }),
    guardrailTimeoutMs: integer({
      env: 'AGENTQ_GUARDRAIL_TIMEOUT_MS',
      min: 10,
      default: 10_000,
      doc: 'Time one guardrail check may take on one text; past it the step fails with `GUARDRAIL_TIMEOUT` (not retried). Waits (a moderation call) are cut at the time; the built-in checks stop between patterns and matches; a custom synchronous check stops only where it calls `checkDeadline()`.',
    }),
    mcpServers: parsed({
      env: 'AGENTQ_MCP_SERVERS',
      default: '{}',
      allowed:
        'JSON: `{"<name>": {"command": "…", "args": […], "env": {…}}}` (stdio) or `{"<name>": {"url": "http://…/mcp", "headers": {…}}}` (streamable HTTP)',
      doc: 'MCP servers whose tools workers offer. A server that will not start or does not speak MCP stops the worker’s start with an error naming it.',
      read: readMcpServers,
    }),
    mcpConnectTimeoutMs: integer({
      env: 'AGENTQ_MCP_CONNECT_TIMEOUT_MS',
      min: 100,
      default: 10_000,
      doc: 'Time an MCP server has to start, shake hands and list its tools.',
    }),
    mcpCallTimeoutMs: integer({
      env: 'AGENTQ_MCP_CALL_TIMEOUT_MS',
      min: 100,
      default: 60_000,
      doc: 'Time one MCP tool call may take (then the tool step is retried, then the model is told).',
    }),
    httpFetchAllowHosts: parsed({
      env: 'AGENTQ_HTTP_FETCH_ALLOW_HOSTS',
      default: '',
      shownDefault: 'empty (the tool is off)',
      allowed: 'host names separated by commas (`*.example.com` = any subdomain)',
      doc: 'Hosts the `http_fetch` tool may fetch. Empty: the tool is not registered. Private, loopback and link-local addresses are refused whatever this says.',
      when: 'To let agents read web pages of the hosts you name.',
      read: readHosts,
    }),
    httpFetchMaxBytes: integer({
      env: 'AGENTQ_HTTP_FETCH_MAX_BYTES',
      min: 1024,
      default: 1024 * 1024,
      shownDefault: '`1048576` (1 MiB)',
      doc: '`http_fetch` reads at most this many bytes of a response (after decompression); the rest is cut and `truncated: true` says so.',
    }),
    httpFetchTimeoutMs: integer({
      env: 'AGENTQ_HTTP_FETCH_TIMEOUT_MS',
      min: 100,
      default: 10_000,
      doc: '`http_fetch` gives up after this long, redirects included.',
    }),
    checkImageUrls: flag({
      env: 'AGENTQ_CHECK_IMAGE_URLS',
      default: true,
      doc: 'Before a model call, the http(s) URL of every image part is resolved as `http_fetch` resolves hosts; a private, loopback, link-local (cloud metadata) address, a name that does not resolve or another scheme fails the step with `INVALID_INPUT`, since the model server would fetch it from inside your network.',
      when: 'Turn it off when the model server never fetches image URLs (it is given only `data:` URLs, or it cannot reach your network).',
    }),
  },
});

export type AgentConfig = AreaConfig<typeof agentArea>;
