import { describe, expect, it } from 'vitest';
import { useAgentE2E } from '../helpers/agent-e2e.js';

/** A public address as an IP literal: this machine resolves no outside names. */
const PUBLIC_IMAGE = 'https://93.184.215.14/cat.png';

const imageQuery = (url: string) => ({
  query: [
    { type: 'text', text: 'What is in this picture?' },
    { type: 'image_url', image_url: { url } },
  ],
  tools: [],
});

/**
 * Image URL parts go through http_fetch's address filter before the model is called: the model server
 * would fetch them from inside the deployment's network (cloud metadata, loopback, private services).
 */
describe('react-agent: image URLs through the address filter (AGENTQ_CHECK_IMAGE_URLS, on by default)', () => {
  const { server, env } = useAgentE2E();
  const run = async (url: string) => {
    const queued = await env.client.enqueue({ graph: 'react-agent', input: imageQuery(url) });
    return env.client.wait(queued.id, { timeoutMs: 30_000 });
  };

  it.each([
    ['the cloud metadata service', 'http://169.254.169.254/latest/meta-data/iam/security-credentials/'],
    ['a loopback literal', 'http://127.0.0.1:6379/cat.png'],
    ['an IPv6 loopback literal', 'http://[::1]/cat.png'],
    ['a name that resolves to loopback', 'http://localhost:8080/cat.png'],
    ['a private network', 'https://10.0.0.5/cat.png'],
    ['a name that does not resolve', 'https://no-such-host.invalid/cat.png'],
  ])('refuses %s before any model call', async (_what, url) => {
    server.setScript([{ content: 'should not be asked' }]);
    const done = await run(url);
    expect(done).toMatchObject({ status: 'failed', error: { code: 'INVALID_INPUT' } });
    expect(done.error?.message).toContain('image part 0');
    expect(server.chatRequests()).toHaveLength(0);
  });

  it('passes a public address on to the model', async () => {
    server.setScript([{ content: 'A cat.' }]);
    const done = await run(PUBLIC_IMAGE);
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'A cat.' } });
    expect(JSON.stringify(server.chatRequests()[0]!.body.messages)).toContain(PUBLIC_IMAGE);
  });
});

describe('react-agent: AGENTQ_CHECK_IMAGE_URLS=false (a model server that never fetches)', () => {
  const { server, env } = useAgentE2E({ env: { AGENTQ_CHECK_IMAGE_URLS: 'false' } });

  it('sends the URL as it is', async () => {
    server.setScript([{ content: 'A cat.' }]);
    const url = 'http://localhost:8080/cat.png';
    const queued = await env.client.enqueue({ graph: 'react-agent', input: imageQuery(url) });
    expect(await env.client.wait(queued.id, { timeoutMs: 30_000 })).toMatchObject({ status: 'completed' });
    expect(JSON.stringify(server.chatRequests()[0]!.body.messages)).toContain(url);
  });
});
