import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AgentqError } from '../../shared/contracts/errors.js';
import { generateObject, repairRequest } from '../../worker/agents/llm/generate-object.js';
import { strictJsonSchema } from '../../worker/agents/llm/strict-json-schema.js';
import type { Message } from '../../shared/contracts/run-record.js';
import { fakeNodeContext, MockLanguageModel, type MockResult } from '../../testing/index.js';

const verdictSchema = z.object({
  approved: z.boolean(),
  critique: z.string(),
  score: z.number().int().min(0).max(10).nullable(),
});
const messages: Message[] = [{ role: 'user', content: 'Judge: "queues hold jobs".' }];

/**
 * generateObject on a scripted model: what it asks for, its repair round and its memos. How the OpenAI adapter
 * puts a json_schema format on the wire is tested by test/contract/openai-conformance.test.ts.
 */
describe('generateObject', () => {
  const scripted = (...generate: MockResult[]) => {
    const languageModel = new MockLanguageModel({ generate });
    return { languageModel, services: { languageModel } };
  };

  it('asks for strict json_schema output and returns the validated object', async () => {
    const { languageModel, services } = scripted('{"approved": true, "critique": "", "score": 9}');
    const { context, recorded } = fakeNodeContext(services);
    const result = await generateObject(context, { messages, schema: verdictSchema, name: 'verdict' });
    expect(result).toMatchObject({ object: { approved: true, critique: '', score: 9 }, repaired: false });
    expect(recorded).toHaveLength(1);
    expect(languageModel.calls[0]!.responseFormat).toEqual({
      type: 'json_schema',
      name: 'verdict',
      strict: true,
      schema: {
        type: 'object',
        properties: {
          approved: { type: 'boolean' },
          critique: { type: 'string' },
          score: { anyOf: [{ type: 'integer', minimum: 0, maximum: 10 }, { type: 'null' }] },
        },
        required: ['approved', 'critique', 'score'],
        additionalProperties: false,
      },
    });
  });

  it('repairs once: the model sees its invalid answer and the validation error', async () => {
    const { languageModel, services } = scripted(
      '{"approved": "yes", "critique": "fine"}',
      '```json\n{"approved": false, "critique": "too short", "score": null}\n```',
    );
    const { context, recorded } = fakeNodeContext(services);
    const result = await generateObject(context, { messages, schema: verdictSchema, name: 'verdict' });
    expect(result).toMatchObject({ object: { approved: false, critique: 'too short', score: null }, repaired: true });
    expect(recorded).toHaveLength(2);
    const repair = languageModel.calls[1]!.messages;
    expect(repair.slice(0, 2)).toEqual([
      messages[0],
      { role: 'assistant', content: '{"approved": "yes", "critique": "fine"}' },
    ]);
    expect(repair[2]!.role).toBe('user');
    expect(repair[2]!.content).toMatch(
      /^Your answer did not match the required JSON schema: approved: .*boolean.*; score: /,
    );
  });

  it('fails with PROVIDER_ERROR and the validation message after a second invalid answer; a retried step pays nothing again', async () => {
    const { languageModel, services } = scripted('I approve.', '{"approved": true}');
    const first = fakeNodeContext(services);
    const error = await generateObject(first.context, { messages, schema: verdictSchema, name: 'verdict' }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(AgentqError);
    expect(error).toMatchObject({ code: 'PROVIDER_ERROR', retryable: false });
    expect((error as AgentqError).message).toMatch(
      /did not match the structured output schema 'verdict' after one repair round: critique: .*; score: /,
    );
    expect((error as AgentqError).details).toMatchObject({ firstProblem: expect.stringMatching(/not valid JSON/) });
    expect(languageModel.calls).toHaveLength(2);

    // Both answers were saved before they were acted on: the same step again replays them without a request.
    const again = fakeNodeContext(services, { memo: first.memo });
    await expect(
      generateObject(again.context, { messages, schema: verdictSchema, name: 'verdict' }),
    ).rejects.toMatchObject({ code: 'PROVIDER_ERROR' });
    expect(languageModel.calls).toHaveLength(2);
  });

  it('treats a cut-off answer as invalid', async () => {
    const { languageModel, services } = scripted(
      { text: '{"approved": true, "crit', finishReason: 'length' },
      '{"approved": true, "critique": "", "score": 10}',
    );
    const { context } = fakeNodeContext(services);
    const result = await generateObject(context, { messages, schema: verdictSchema });
    expect(result.repaired).toBe(true);
    expect(languageModel.calls[1]!.messages.at(-1)!.content).toBe(
      repairRequest('the answer was cut off at the token limit before the JSON object ended'),
    );
  });

  it('refuses schemas strict mode cannot express, before any request', () => {
    expect(() => strictJsonSchema(z.object({ a: z.string().optional() }), 'x')).toThrow(
      /field 'a' is optional, which strict mode cannot express; use \.nullable\(\)/,
    );
    expect(() => strictJsonSchema(z.object({ outer: z.object({ b: z.number().optional() }) }), 'x')).toThrow(
      /'outer\.b'/,
    );
    expect(() => strictJsonSchema(z.string(), 'x')).toThrow(/must be a z\.object/);
  });
});
