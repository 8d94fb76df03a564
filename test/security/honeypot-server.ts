import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Honeypot {
  port: number;
  /** TCP connections that reached it: any is egress to a private address. */
  connections(): number;
  close(): Promise<void>;
}

/**
 * A "private" HTTP service (an intranet page, a metadata endpoint) on loopback. It listens on `::`
 * (dual stack) so 127.0.0.1, ::1, 0.0.0.0 and ::ffff:127.0.0.1 all reach it, and counts every TCP
 * connection: a tool that reached it, whatever it then did with the answer, egressed.
 */
export async function startHoneypot(): Promise<Honeypot> {
  let connections = 0;
  const server: Server = createServer((_request, response) =>
    response.writeHead(200, { 'content-type': 'text/plain' }).end('aws_secret_access_key=honeypot'),
  );
  server.on('connection', () => (connections += 1));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: 0, host: '::', ipv6Only: false }, resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
