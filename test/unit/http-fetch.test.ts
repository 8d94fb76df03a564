import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/config/config.js';
import { AgentqError } from '../../shared/contracts/errors.js';
import type { ToolExecutionContext } from '../../shared/ports/define-tool.js';
import { createDefaultServices } from '../../worker/default-services.js';
import { isAllowedHost, type ResolveHost } from '../../worker/agents/tools/fetch-allowed-url.js';
import {
  createHttpFetchTool,
  type HttpFetchResult,
  type HttpFetchToolOptions,
} from '../../worker/agents/tools/http-fetch.js';
import { isPublicAddress } from '../../worker/runtime/public-address.js';

interface TestServer {
  server: Server;
  port: number;
  /** TCP connections accepted so far. */
  connections: number;
  requests: string[];
}

async function listen(host: string, handler: (path: string, response: ServerResponse) => void): Promise<TestServer> {
  const state: TestServer = { server: createServer(), port: 0, connections: 0, requests: [] };
  state.server.on('connection', () => (state.connections += 1));
  state.server.on('request', (request, response) => {
    state.requests.push(request.url ?? '');
    handler(request.url ?? '/', response);
  });
  await new Promise<void>((resolve) => state.server.listen(0, host, resolve));
  state.port = (state.server.address() as AddressInfo).port;
  return state;
}

const toolContext: ToolExecutionContext = {
  runId: 'run-1',
  tenant: 'default',
  toolCallId: 'call-1',
  idempotencyKey: 'run-1:s0.t0:call-1',
  attempt: 1,
  abortSignal: new AbortController().signal,
  logger: pino({ level: 'silent' }),
};

/** A stand-in for DNS: this machine has no outside network. `public.test` plays a public host on 127.0.0.2. */
const resolve: ResolveHost = async (hostname) => {
  switch (hostname) {
    case 'localhost':
      return [
        { address: '127.0.0.1', family: 4 },
        { address: '::1', family: 6 },
      ];
    case 'public.test':
    case 'other.test':
      return [{ address: '127.0.0.2', family: 4 }];
    case 'sneaky.test':
      // One public-looking address and one private one: the private one must still refuse the host.
      return [
        { address: '127.0.0.2', family: 4 },
        { address: '10.0.0.7', family: 4 },
      ];
    default:
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  }
};

/** The test's notion of "public": everything isPublicAddress allows, plus 127.0.0.2 (our public.test). */
const isAllowedAddress = (address: string) => address === '127.0.0.2' || isPublicAddress(address);

describe('http_fetch', () => {
  let loopback: TestServer;
  let publicSite: TestServer;
  const fetchWith = (options: Partial<HttpFetchToolOptions> = {}) => {
    const tool = createHttpFetchTool({
      allowHosts: ['127.0.0.1', '::1', '169.254.169.254', 'localhost', 'public.test', 'sneaky.test', 'other.test'],
      maxBytes: 64 * 1024,
      timeoutMs: 2000,
      resolve,
      isAllowedAddress,
      ...options,
    });
    return (url: string) => tool.execute({ url }, toolContext) as Promise<HttpFetchResult>;
  };
  const refusal = async (promise: Promise<unknown>) => {
    const error = await promise.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(AgentqError);
    expect(error).toMatchObject({ code: 'TOOL_ERROR', retryable: false });
    return (error as AgentqError).message;
  };

  beforeAll(async () => {
    // Listens on every address, IPv4 and IPv6: any loopback connection attempt lands here and is counted.
    loopback = await listen('::', (_path, response) => response.end('secret from loopback'));
    publicSite = await listen('127.0.0.2', (path, response) => {
      if (path === '/page') {
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        response.end(
          '<html><head><title>Queues</title><style>p{}</style></head><body><nav>menu</nav><main><h1>Job queues</h1>' +
            '<p>A queue holds <b>jobs</b>.</p><script>alert(1)</script><p>Workers take them.</p></main></body></html>',
        );
      } else if (path === '/moved') {
        response.writeHead(302, { location: '/page' });
        response.end();
      } else if (path === '/to-loopback') {
        response.writeHead(302, { location: `http://127.0.0.1:${loopback.port}/` });
        response.end();
      } else if (path === '/to-localhost') {
        response.writeHead(301, { location: `http://localhost:${loopback.port}/` });
        response.end();
      } else if (path === '/to-ipv6-loopback') {
        response.writeHead(307, { location: `http://[::1]:${loopback.port}/` });
        response.end();
      } else if (path === '/to-unlisted') {
        response.writeHead(302, { location: 'http://unlisted.test/' });
        response.end();
      } else if (path === '/loop') {
        response.writeHead(302, { location: '/loop' });
        response.end();
      } else if (path === '/big') {
        response.writeHead(200, { 'content-type': 'text/plain' });
        response.end('x'.repeat(10_000));
      } else if (path === '/gzip') {
        response.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        response.end(gzipSync(JSON.stringify({ ok: true, items: [1, 2, 3] })));
      } else if (path === '/image') {
        response.writeHead(200, { 'content-type': 'image/png' });
        response.end(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
      } else if (path === '/hang') {
        // Never answers.
      } else {
        response.writeHead(404, { 'content-type': 'text/plain' });
        response.end('not here');
      }
    });
  });
  afterAll(async () => {
    for (const { server } of [loopback, publicSite]) {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    }
  });
  beforeEach(() => {
    loopback.connections = 0;
    publicSite.requests.length = 0;
  });

  it('refuses loopback, link-local and names resolving to loopback before connecting', async () => {
    const fetch = fetchWith();
    expect(await refusal(fetch(`http://127.0.0.1:${loopback.port}/`))).toMatch(
      /127\.0\.0\.1, a private, loopback or link-local address; refused before connecting/,
    );
    expect(await refusal(fetch(`http://[::1]:${loopback.port}/`))).toMatch(
      /::1, a private, loopback or link-local address/,
    );
    expect(await refusal(fetch('http://169.254.169.254/latest/meta-data/'))).toMatch(
      /169\.254\.169\.254, a private, loopback or link-local address/,
    );
    expect(await refusal(fetch(`http://localhost:${loopback.port}/`))).toMatch(
      /host localhost resolves to (127\.0\.0\.1|::1)/,
    );
    expect(await refusal(fetch('http://sneaky.test/'))).toMatch(/host sneaky\.test resolves to 10\.0\.0\.7/);
    // The recording server on every loopback address saw no connection at all.
    expect(loopback.connections).toBe(0);
  });

  it('refuses a name resolving to loopback with the real resolver too', async () => {
    const fetch = fetchWith({ resolve: undefined, isAllowedAddress: undefined });
    expect(await refusal(fetch(`http://localhost:${loopback.port}/`))).toMatch(
      /host localhost resolves to (127\.0\.0\.1|::1)/,
    );
    expect(loopback.connections).toBe(0);
  });

  it('re-checks every redirect: a redirect to loopback is refused before connecting', async () => {
    const fetch = fetchWith();
    expect(await refusal(fetch(`http://public.test:${publicSite.port}/to-loopback`))).toMatch(
      /127\.0\.0\.1, a private, loopback/,
    );
    expect(await refusal(fetch(`http://public.test:${publicSite.port}/to-localhost`))).toMatch(
      /host localhost resolves to/,
    );
    expect(await refusal(fetch(`http://public.test:${publicSite.port}/to-ipv6-loopback`))).toMatch(
      /::1, a private, loopback/,
    );
    expect(await refusal(fetch(`http://public.test:${publicSite.port}/to-unlisted`))).toMatch(
      /host unlisted\.test is not on the allowlist/,
    );
    expect(await refusal(fetch(`http://public.test:${publicSite.port}/loop`))).toMatch(/redirected more than 5 times/);
    expect(publicSite.requests.filter((path) => path.startsWith('/to-'))).toHaveLength(4);
    expect(loopback.connections).toBe(0);
  });

  it('fetches an allowed public host, follows a redirect and reduces HTML to text', async () => {
    const fetch = fetchWith();
    const page = await fetch(`http://public.test:${publicSite.port}/moved`);
    expect(page).toEqual({
      url: `http://public.test:${publicSite.port}/page`,
      status: 200,
      contentType: 'text/html; charset=utf-8',
      title: 'Queues',
      text: '# Job queues\n\nA queue holds jobs.\n\nWorkers take them.',
      truncated: false,
    });
    expect(publicSite.requests).toEqual(['/moved', '/page']);
    const json = await fetch(`http://public.test:${publicSite.port}/gzip`);
    expect(JSON.parse(json.text)).toEqual({ ok: true, items: [1, 2, 3] });
    expect((await fetch(`http://public.test:${publicSite.port}/nothing`)).status).toBe(404);
  });

  it('only allowlisted hosts, only http(s), size and time capped', async () => {
    const fetch = fetchWith({ maxBytes: 1024, timeoutMs: 300 });
    expect(await refusal(fetch('http://unlisted.test/'))).toMatch(
      /host unlisted\.test is not on the allowlist \(AGENTQ_HTTP_FETCH_ALLOW_HOSTS: /,
    );
    expect(await refusal(fetch('file:///etc/passwd'))).toMatch(/only http:\/\/ and https:\/\/ URLs/);
    expect(await refusal(fetch('not a url'))).toMatch(/is not a valid URL/);
    const big = await fetch(`http://public.test:${publicSite.port}/big`);
    expect(big).toMatchObject({ truncated: true });
    expect(big.text).toHaveLength(1024);
    expect(await refusal(fetch(`http://public.test:${publicSite.port}/image`))).toMatch(
      /is image\/png, not text or HTML/,
    );
    const started = Date.now();
    expect(await refusal(fetch(`http://public.test:${publicSite.port}/hang`))).toMatch(/did not answer within 300 ms/);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('matches the allowlist exactly or by *. subdomain', () => {
    expect(isAllowedHost('docs.example.com', ['docs.example.com'])).toBe(true);
    expect(isAllowedHost('DOCS.example.com.', ['docs.example.com'])).toBe(true);
    expect(isAllowedHost('evil-docs.example.com', ['docs.example.com'])).toBe(false);
    expect(isAllowedHost('a.b.example.com', ['*.example.com'])).toBe(true);
    expect(isAllowedHost('example.com', ['*.example.com'])).toBe(false);
    expect(isAllowedHost('badexample.com', ['*.example.com'])).toBe(false);
    expect(isAllowedHost('[::1]', ['::1'])).toBe(true);
  });

  it('is registered only when AGENTQ_HTTP_FETCH_ALLOW_HOSTS lists hosts', () => {
    const off = createDefaultServices(loadConfig({}));
    expect(off.tools.names()).not.toContain('http_fetch');
    const on = createDefaultServices(
      loadConfig({ AGENTQ_HTTP_FETCH_ALLOW_HOSTS: 'docs.example.com, *.wikipedia.org' }),
    );
    expect(on.tools.get('http_fetch')?.description).toMatch(/docs\.example\.com, \*\.wikipedia\.org/);
    expect(() => loadConfig({ AGENTQ_HTTP_FETCH_ALLOW_HOSTS: 'http://docs.example.com/' })).toThrow(
      /is not a host name/,
    );
  });
});
