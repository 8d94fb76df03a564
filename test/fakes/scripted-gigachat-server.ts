/**
 * A scripted GigaChat server for tests, built from GigaChat's public REST reference: the OAuth endpoint
 * (`POST /api/v2/oauth`, client credentials: `Authorization: Basic <key>`, an `RqUID` uuid4, a form body
 * `scope=…`, answering `{access_token, expires_at}` in epoch milliseconds) and the chat endpoint
 * (`POST /api/v1/chat/completions`, `Authorization: Bearer <token>`). Tokens expire on the server's own
 * clock and can be revoked, so the adapter's refresh is proven by what the server refused. Chat answers
 * come from a script: text, a `function_call` (arguments an object) with its `functions_state_id`, any
 * finish reason (`blacklist` included), or an HTTP fault; `stream: true` gets server-sent events ending
 * `data: [DONE]`. Every request is logged for assertions.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';

/** One scripted reply. */
export interface GigaChatScriptedReply {
  content?: string;
  /** A call of a function the request offered; arguments an object, as GigaChat sends them. */
  functionCall?: { name: string; arguments: Record<string, unknown> };
  /** `functions_state_id` of a function call's reply. @default a fresh uuid when there is a call */
  stateId?: string | null;
  /** @default 'function_call' with a call, 'stop' otherwise */
  finishReason?: 'stop' | 'length' | 'function_call' | 'blacklist' | 'error';
  usage?: { prompt_tokens: number; completion_tokens: number };
}

/** An HTTP error, with GigaChat's body `{status, message}`. */
export interface GigaChatScriptedFault {
  status: number;
  message?: string;
  retryAfter?: number;
}

export type GigaChatScripted = GigaChatScriptedReply | GigaChatScriptedFault;

/** A request as the server received it. */
export interface GigaChatRecordedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  /** Raw body text. */
  raw: string;
  /** JSON body (chat) or the form's fields (OAuth). */
  body: Record<string, unknown>;
  /** HTTP status answered. */
  status: number;
}

export interface ScriptedGigaChatServerOptions {
  /** The authorization key the OAuth endpoint accepts. @default 'c2NyaXB0ZWQ6a2V5' */
  authKey?: string;
  /** The scope the key was issued for. @default 'GIGACHAT_API_PERS' */
  scope?: string;
  /** How long a token lives. @default 30 minutes */
  tokenTtlMs?: number;
  /** The server's clock (tokens expire on it). @default Date.now */
  now?: () => number;
  /** Serve HTTPS with this key and certificate (PEM), as GigaChat does. @default plain HTTP */
  tls?: { key: string; cert: string };
}

export interface ScriptedGigaChatServer {
  /** Origin, e.g. `http://127.0.0.1:4321`. */
  readonly url: string;
  readonly authUrl: string;
  /** The API base, up to `/api/v1`. */
  readonly baseUrl: string;
  readonly authKey: string;
  readonly requests: readonly GigaChatRecordedRequest[];
  oauthRequests(): GigaChatRecordedRequest[];
  chatRequests(): GigaChatRecordedRequest[];
  /** Chat requests refused with 401 (an expired, revoked or unknown token). */
  refusedTokens(): number;
  /** Replace the script: each chat request takes the next reply. */
  setScript(script: readonly GigaChatScripted[]): void;
  /** Every token issued so far is refused from now on. */
  revokeTokens(): void;
  reset(): void;
  close(): Promise<void>;
}

const ROLES = new Set(['system', 'user', 'assistant', 'function']);
const FINISH_REASONS = new Set(['stop', 'length', 'function_call', 'blacklist', 'error']);

export async function startScriptedGigaChatServer(
  options: ScriptedGigaChatServerOptions = {},
): Promise<ScriptedGigaChatServer> {
  const authKey = options.authKey ?? 'c2NyaXB0ZWQ6a2V5';
  const scope = options.scope ?? 'GIGACHAT_API_PERS';
  const ttl = options.tokenTtlMs ?? 30 * 60_000;
  const now = options.now ?? Date.now;
  const requests: GigaChatRecordedRequest[] = [];
  const tokens = new Map<string, number>();
  let script: GigaChatScripted[] = [];
  let issued = 0;

  const listener = (request: IncomingMessage, response: ServerResponse) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent)
        send(response, 500, { status: 500, message: `scripted server failed: ${String(error)}` });
      else response.destroy();
    });
  };
  const server = options.tls ? createHttpsServer(options.tls, listener) : createServer(listener);

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const raw = await readBody(request);
    const path = (request.url ?? '/').split('?')[0]!;
    const record: GigaChatRecordedRequest = { path, headers: request.headers, raw, body: {}, status: 0 };
    requests.push(record);
    const answer = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      record.status = status;
      send(response, status, body, headers);
    };
    if (request.method === 'POST' && path === '/api/v2/oauth') {
      record.body = Object.fromEntries(new URLSearchParams(raw));
      if (!/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i.test(String(request.headers.rquid)))
        return answer(400, { code: 5, message: 'RqUID header must be a uuid4' });
      if (!String(request.headers['content-type']).startsWith('application/x-www-form-urlencoded'))
        return answer(400, { code: 5, message: 'the body must be application/x-www-form-urlencoded' });
      if (request.headers.authorization !== `Basic ${authKey}`)
        return answer(401, { code: 6, message: 'credentials doesn`t match db data' });
      if (record.body.scope !== scope)
        return answer(400, { code: 7, message: 'scope from db not fully includes consumed scope' });
      const token = `scripted-token-${++issued}`;
      const expiresAt = now() + ttl;
      tokens.set(token, expiresAt);
      return answer(200, { access_token: token, expires_at: expiresAt });
    }
    if (request.method === 'POST' && path === '/api/v1/chat/completions') {
      const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
      const expiresAt = bearer === undefined ? undefined : tokens.get(bearer);
      try {
        record.body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        return answer(400, { status: 400, message: 'body is not JSON' });
      }
      if (expiresAt === undefined || expiresAt <= now())
        return answer(401, { status: 401, message: 'Token has expired' });
      const invalid = invalidChatBody(record.body);
      if (invalid) return answer(422, { status: 422, message: invalid });
      const next = script.shift();
      if (next === undefined)
        return answer(500, { status: 500, message: 'scripted GigaChat server: script exhausted' });
      if ('status' in next)
        return answer(
          next.status,
          { status: next.status, message: next.message ?? `scripted fault ${next.status}` },
          next.retryAfter === undefined ? {} : { 'retry-after': String(next.retryAfter) },
        );
      const completion = completionOf(next, record.body);
      if (record.body.stream === true) {
        record.status = 200;
        return streamReply(response, completion);
      }
      return answer(200, completion);
    }
    answer(404, { status: 404, message: `no route ${request.method} ${path}` });
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `${options.tls ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    authUrl: `${url}/api/v2/oauth`,
    baseUrl: `${url}/api/v1`,
    authKey,
    requests,
    oauthRequests: () => requests.filter((request) => request.path === '/api/v2/oauth'),
    chatRequests: () => requests.filter((request) => request.path === '/api/v1/chat/completions'),
    refusedTokens: () =>
      requests.filter((request) => request.path === '/api/v1/chat/completions' && request.status === 401).length,
    setScript: (next) => void (script = [...next]),
    revokeTokens: () => tokens.clear(),
    reset: () => {
      requests.length = 0;
      script = [];
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** What the reference requires of a chat body; the first problem, or undefined. */
function invalidChatBody(body: Record<string, unknown>): string | undefined {
  if (typeof body.model !== 'string' || body.model === '') return 'model is required';
  if (!Array.isArray(body.messages) || body.messages.length === 0) return 'messages must be a non-empty array';
  for (const [index, message] of (body.messages as Record<string, unknown>[]).entries()) {
    if (!ROLES.has(String(message.role))) return `messages[${index}].role '${String(message.role)}' is not allowed`;
    if (typeof message.content !== 'string') return `messages[${index}].content must be a string`;
    if (message.role === 'function') {
      if (typeof message.name !== 'string') return `messages[${index}] (function) needs a name`;
      if (!isJsonObject(message.content))
        return `messages[${index}].content of a function result must be a JSON object`;
    }
    const call = message.function_call as { name?: unknown; arguments?: unknown } | undefined;
    if (call !== undefined && (typeof call.name !== 'string' || !isObject(call.arguments)))
      return `messages[${index}].function_call needs a name and arguments as an object`;
  }
  for (const [index, fn] of ((body.functions as Record<string, unknown>[] | undefined) ?? []).entries()) {
    if (typeof fn.name !== 'string' || !isObject(fn.parameters))
      return `functions[${index}] needs a name and parameters`;
    for (const example of (fn.few_shot_examples as Record<string, unknown>[] | undefined) ?? [])
      if (typeof example.request !== 'string' || !isObject(example.params))
        return `functions[${index}].few_shot_examples entries need a request and params`;
  }
  return undefined;
}

function completionOf(reply: GigaChatScriptedReply, body: Record<string, unknown>): Record<string, unknown> {
  const call = reply.functionCall;
  const stateId = call ? (reply.stateId === undefined ? randomUUID() : reply.stateId) : null;
  const finishReason = reply.finishReason ?? (call ? 'function_call' : 'stop');
  if (!FINISH_REASONS.has(finishReason)) throw new Error(`unknown finish reason ${finishReason}`);
  const content = reply.content ?? '';
  const usage = reply.usage ?? {
    prompt_tokens: Math.ceil(JSON.stringify(body.messages).length / 4),
    completion_tokens: Math.ceil(content.length / 4) + 1,
  };
  return {
    choices: [
      {
        message: {
          role: 'assistant',
          content,
          ...(call ? { function_call: call } : {}),
          ...(stateId ? { functions_state_id: stateId } : {}),
        },
        index: 0,
        finish_reason: finishReason,
      },
    ],
    created: Math.floor(Date.now() / 1000),
    model: `${String(body.model)}:2.0.28.2`,
    object: 'chat.completion',
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens, precached_prompt_tokens: 0 },
  };
}

/** The reply as GigaChat streams it: the text a word per event, a call whole in one delta, then the finish reason with the usage. */
function streamReply(response: ServerResponse, completion: Record<string, unknown>): void {
  const choice = (completion.choices as { message: Record<string, unknown>; finish_reason: string }[])[0]!;
  const base = { created: completion.created, model: completion.model, object: 'chat.completion' };
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const event = (data: unknown) => response.write(`data: ${JSON.stringify(data)}\n\n`);
  const words = String(choice.message.content).match(/\s*\S+\s*/g) ?? [];
  for (const [index, word] of words.entries())
    event({
      ...base,
      choices: [{ delta: { content: word, ...(index === 0 ? { role: 'assistant' } : {}) }, index: 0 }],
    });
  if (choice.message.function_call)
    event({
      ...base,
      choices: [
        {
          delta: {
            role: 'assistant',
            content: '',
            function_call: choice.message.function_call,
            ...(choice.message.functions_state_id ? { functions_state_id: choice.message.functions_state_id } : {}),
          },
          index: 0,
        },
      ],
    });
  event({
    ...base,
    choices: [{ delta: { content: '' }, index: 0, finish_reason: choice.finish_reason }],
    usage: completion.usage,
  });
  response.end('data: [DONE]\n\n');
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function send(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isJsonObject(text: unknown): boolean {
  try {
    return isObject(JSON.parse(String(text)));
  } catch {
    return false;
  }
}
