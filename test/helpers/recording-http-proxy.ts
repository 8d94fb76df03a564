/**
 * An HTTP proxy that records every exchange byte for byte: what a client really sent (method, path with
 * its query, headers, body) and what the server behind really answered (status, headers, body, a
 * streamed body whole). Put it between an SDK and a fake to check both sides against a contract.
 */
import { Buffer } from 'node:buffer';
import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WireRequest, WireResponse } from './openai-contract.js';

export interface RecordedExchange {
  request: WireRequest;
  /** Undefined while the answer is still coming, or when the server behind never answered. */
  response?: WireResponse;
}

export interface RecordingHttpProxy {
  /** e.g. `http://127.0.0.1:41234` (no path: add the one the server behind expects). */
  readonly origin: string;
  /** Every exchange, in arrival order (a live array). */
  readonly exchanges: RecordedExchange[];
  close(): Promise<void>;
}

/** Starts a proxy to `target` (an origin such as `http://127.0.0.1:5000`) on a free loopback port. */
export async function startRecordingHttpProxy(target: string): Promise<RecordingHttpProxy> {
  const upstream = new URL(target);
  const exchanges: RecordedExchange[] = [];
  const server = createServer((incoming, outgoing) => {
    void readAll(incoming).then((body) => {
      const exchange: RecordedExchange = {
        request: { method: incoming.method ?? 'GET', url: incoming.url ?? '/', headers: incoming.headers, body },
      };
      exchanges.push(exchange);
      const forward = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: exchange.request.method,
          path: exchange.request.url,
          headers: { ...incoming.headers, host: upstream.host },
        },
        (answer) => {
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
          const chunks: Buffer[] = [];
          // Passed on chunk by chunk, so a streamed answer reaches the client as it comes.
          answer.on('data', (chunk: Buffer) => {
            chunks.push(chunk);
            outgoing.write(chunk);
          });
          answer.on('end', () => {
            exchange.response = {
              status: answer.statusCode ?? 0,
              headers: answer.headers,
              body: Buffer.concat(chunks),
            };
            outgoing.end();
          });
          answer.on('error', () => outgoing.destroy());
        },
      );
      forward.on('error', () => outgoing.destroy());
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    exchanges,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

async function readAll(stream: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
