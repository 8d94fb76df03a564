import { createServer, type Server } from 'node:http';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** Resource attributes of the process that sent it. */
  resource: Record<string, unknown>;
  attributes: Record<string, unknown>;
}

interface OtlpAttribute {
  key: string;
  value: Record<string, unknown>;
}

function attributes(list: OtlpAttribute[] = []): Record<string, unknown> {
  return Object.fromEntries(list.map(({ key, value }) => [key, Object.values(value)[0]]));
}

/** A minimal OTLP/HTTP JSON trace receiver on loopback, collecting spans from any process. */
export async function startOtlpReceiver(): Promise<{ url: string; spans: ReceivedSpan[]; close(): Promise<void> }> {
  const spans: ReceivedSpan[] = [];
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      if (request.url === '/v1/traces') {
        const payload = JSON.parse(body) as {
          resourceSpans: {
            resource: { attributes: OtlpAttribute[] };
            scopeSpans: {
              spans: (Omit<ReceivedSpan, 'resource' | 'attributes'> & { attributes: OtlpAttribute[] })[];
            }[];
          }[];
        };
        for (const resourceSpans of payload.resourceSpans) {
          const resource = attributes(resourceSpans.resource.attributes);
          for (const scope of resourceSpans.scopeSpans) {
            for (const span of scope.spans)
              spans.push({
                ...span,
                parentSpanId: span.parentSpanId ?? '',
                resource,
                attributes: attributes(span.attributes),
              });
          }
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
