import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenAIProviderBatches } from '../../shared/adapters/openai/openai-provider-batches.js';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';

/** The ProviderBatches port over the real openai SDK, against the scripted server's Batch API. */
describe('OpenAIProviderBatches', () => {
  let server: ScriptedOpenAIServer;
  let api: OpenAIProviderBatches;
  beforeAll(async () => {
    server = await startScriptedOpenAIServer({
      script: (request) =>
        JSON.stringify(request.body.messages).includes('refuse')
          ? { status: 400, code: 'invalid_value', message: 'no such thing' }
          : { content: 'yes', usage: { prompt_tokens: 7, completion_tokens: 2 } },
    });
    api = new OpenAIProviderBatches({
      model: 'scripted-chat',
      baseURL: server.url,
      maxTokensParameter: 'max_completion_tokens',
    });
  });
  afterAll(async () => server?.close());

  const line = (customId: string, content: string) =>
    JSON.stringify({
      custom_id: customId,
      method: 'POST',
      url: api.endpoint,
      body: api.requestBody({ messages: [{ role: 'user', content }], maxTokens: 50, temperature: 0 }),
    });

  it('a request line carries exactly the live, non-streamed body', () => {
    expect(
      api.requestBody({
        messages: [{ role: 'user', content: 'hi' }],
        tools: [{ name: 'search', description: 'search', parameters: { type: 'object', properties: {} } }],
        maxTokens: 50,
        onTextDelta: () => undefined,
      }),
    ).toEqual({
      model: 'scripted-chat',
      messages: [{ role: 'user', content: 'hi' }],
      tools: [
        {
          type: 'function',
          function: { name: 'search', description: 'search', parameters: { type: 'object', properties: {} } },
        },
      ],
      max_completion_tokens: 50,
    });
  });

  it('uploads, creates, finds again by file name and by metadata (across pages), retrieves and downloads', async () => {
    expect(await api.supported()).toBe(true);
    const fileId = await api.upload(
      'agentq-x.f1.jsonl',
      `${line('a|s0.t0|model|1', 'ask')}\n${line('b|s0.t0|model|1', 'refuse')}\n`,
    );
    expect(await api.findUpload('agentq-x.f1.jsonl')).toBe(fileId);
    expect(await api.findUpload('agentq-nothing.jsonl')).toBeUndefined();
    const since = Math.floor(Date.now() / 1000) - 60;
    const created = await api.create(fileId, { agentq_flush: 'x.f1' });
    expect(created).toMatchObject({
      status: 'validating',
      metadata: { agentq_flush: 'x.f1' },
      requestCounts: { total: 2 },
    });
    // 120 newer batches: the one to find is on the second page of the list (100 a page).
    const other = await api.upload('other.jsonl', `${line('c|s0.t0|model|1', 'ask')}\n`);
    for (let index = 0; index < 120; index += 1) await api.create(other, { agentq_flush: `other.f${index}` });
    expect((await api.findBatch('agentq_flush', 'x.f1', since))?.id).toBe(created.id);
    expect(await api.findBatch('agentq_flush', 'x.f404', since)).toBeUndefined();
    const done = await api.retrieve(created.id);
    expect(done).toMatchObject({ status: 'completed', requestCounts: { total: 2, completed: 1, failed: 1 } });
    const output = await api.download(done.outputFileId!);
    expect(output).toEqual({
      results: [
        {
          customId: 'a|s0.t0|model|1',
          response: expect.objectContaining({
            message: { role: 'assistant', content: 'yes' },
            usage: { inputTokens: 7, outputTokens: 2 },
          }),
        },
      ],
      problems: [],
    });
    expect((await api.download(done.errorFileId!)).results).toEqual([
      { customId: 'b|s0.t0|model|1', error: { status: 400, code: 'invalid_value', message: 'no such thing' } },
    ]);
  });

  it('reads a bad results file line by line: what it cannot read is a problem, not a failure of the rest', async () => {
    server.batchApi!.configure({
      outputFile: (lines) => ['{not json', JSON.stringify({ response: { status_code: 200 } }), ...lines].join('\n'),
    });
    try {
      const fileId = await api.upload('agentq-y.f1.jsonl', `${line('d|s0.t0|model|1', 'ask')}\n`);
      const created = await api.create(fileId, { agentq_flush: 'y.f1' });
      const done = await api.retrieve(created.id);
      const { results, problems } = await api.download(done.outputFileId!);
      expect(results.map((result) => result.customId)).toEqual(['d|s0.t0|model|1']);
      expect(problems).toEqual([
        { line: 1, problem: 'not JSON: {not json' },
        { line: 2, problem: 'no custom_id' },
      ]);
    } finally {
      server.batchApi!.configure({ outputFile: undefined });
    }
  });

  it("maps the provider's failures: 5xx retryable, an unknown batch not, each naming the Batch API step", async () => {
    server.batchApi!.configure({
      fault: (route) => (route === 'batches.create' ? { status: 503, message: 'overloaded' } : undefined),
    });
    try {
      await expect(api.create('file-scripted-0', {})).rejects.toMatchObject({
        code: 'PROVIDER_ERROR',
        retryable: true,
        message: expect.stringMatching(/^Batch API \(create a batch of file file-scripted-0\): .*HTTP 503.*overloaded/),
      });
    } finally {
      server.batchApi!.configure({ fault: undefined });
    }
    await expect(api.retrieve('batch_nope')).rejects.toMatchObject({ code: 'PROVIDER_ERROR', retryable: false });
  });

  it("downloads with an Accept the published contract lists; the SDK's own `application/binary` is refused 406 by a server holding to it", async () => {
    const fileId = await api.upload('agentq-z.f1.jsonl', `${line('e|s0.t0|model|1', 'ask')}\n`);
    const sdk = new OpenAI({ baseURL: server.url, apiKey: 'unused', maxRetries: 0 });
    // The contract (GET /files/{file_id}/content) lists only application/json; the SDK asks for application/binary.
    const refused = await sdk.files.content(fileId).catch((error: unknown) => error);
    expect(refused).toMatchObject({ status: 406 });
    // The SDK keeps only a JSON body's `error` member: the server's reason is lost in its own message.
    expect((refused as Error).message).toBe('406 status code (no body)');
    const before = server.batchApi!.counts();
    expect((await api.download(fileId)).results.map((result) => result.customId)).toEqual(['e|s0.t0|model|1']);
    expect(server.batchApi!.counts()).toMatchObject({
      downloads: before.downloads + 1,
      downloadsRefused: before.downloadsRefused,
    });
    // Not strict: the SDK's own request is answered (the option tests rely on to compare).
    server.batchApi!.configure({ strictAccept: false });
    try {
      expect(await (await sdk.files.content(fileId)).text()).toContain('e|s0.t0|model|1');
    } finally {
      server.batchApi!.configure({ strictAccept: true });
    }
  });

  it("a refused download's error keeps the response's body (JSON without an `error` member, or text), cut to 500 characters", async () => {
    const fileId = await api.upload('agentq-w.f1.jsonl', `${line('f|s0.t0|model|1', 'ask')}\n`);
    const problem = JSON.stringify({ title: 'Not Acceptable', status: 406, detail: 'Unable to find content for x' });
    server.batchApi!.configure({ failDownloads: { times: 1, status: 406, body: problem } });
    await expect(api.download(fileId)).rejects.toMatchObject({
      code: 'PROVIDER_ERROR',
      retryable: false,
      message: expect.stringContaining(`HTTP 406): ${problem}`),
      details: { status: 406, body: problem },
    });
    const long = `storage unavailable ${'x'.repeat(2000)}`;
    server.batchApi!.configure({ failDownloads: { times: 1, status: 503, body: long, contentType: 'text/plain' } });
    const error = (await api.download(fileId).catch((caught: unknown) => caught)) as Error;
    expect(error).toMatchObject({
      retryable: true,
      message: expect.stringContaining('HTTP 503): storage unavailable x'),
    });
    expect(error.message).toContain('… (2020 characters)');
    expect(error.message.length).toBeLessThan(700);
    // Then the download answers again.
    expect((await api.download(fileId)).results).toHaveLength(1);
  });
});
