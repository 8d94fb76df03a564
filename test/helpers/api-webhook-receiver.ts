import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface WebhookReceiver {
  readonly url: string;
  readonly received: ReceivedWebhook[];
  close(): Promise<void>;
}

/**
 * A webhook receiver on loopback that records every POST and answers with the scripted statuses in
 * turn (the last one repeats), e.g. [500, 200]: fails the first delivery, accepts the retry.
 */
export async function startWebhookReceiver(statuses: number[] = [200]): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      const status = statuses[Math.min(received.length - 1, statuses.length - 1)] ?? 200;
      response.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : 'try again');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/agentq`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
