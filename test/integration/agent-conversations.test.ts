import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TextMessage as Message } from '../../shared/contracts/run-record.js';
import type { ConversationRecord } from '../../shared/store/conversations.js';
import type { RagOutput } from '../../shared/retrieval/rag-output.js';
import type { RunRecord } from '../../shared/contracts/run-record.js';
import { questionsAndAnswers } from '../../worker/runtime/memory/conversation-history.js';
import { DEFAULT_JUDGE_SYSTEM_PROMPT, DEFAULT_WRITER_SYSTEM_PROMPT } from '../../worker/agents/graphs/reflect.js';
import { DEFAULT_REACT_SYSTEM_PROMPT } from '../../worker/agents/graphs/react-agent.js';
import { expertSystemPrompt } from '../../worker/agents/graphs/multi-agent.js';
import { ragSystemPrompt } from '../../worker/agents/rag/rag-prompts.js';
import type { ScriptedChatRequest, ScriptedOpenAIServer, ScriptedResponse } from '../fakes/scripted-openai-server.js';
import { KEYS, startApiTestEnv, type ApiTestEnv } from '../helpers/api-test-env.js';
import { tempDirectory } from '../helpers/ingest-fixtures.js';
import { ingestFolder, RAG_DOCS, startRagTestEnv, writeDocs, type RagTestEnv } from '../helpers/rag-fixtures.js';

const messagesOf = (request: ScriptedChatRequest) => request.body.messages as unknown as Message[];
const lastUser = (messages: readonly Message[]) => messages.findLast((message) => message.role === 'user')?.content;
/** A message as `role: text`, tool calls and results left out of the text. */
const line = (message: Message) => `${message.role}: ${message.content ?? ''}`;
/** The conversation's turns as the user sees them: each question and answer, without system prompt or tool traffic. */
const turnsOf = (messages: readonly Message[]) =>
  (questionsAndAnswers(messages) as Message[]).filter((message) => message.role !== 'system').map(line);

/** A run's turn through the HTTP API, as tenant acme; → the finished run. */
async function turn(env: ApiTestEnv, body: { graph: string; input: unknown; conversationId: string }) {
  const response = await env.as(KEYS.acmeProducer, { method: 'POST', url: '/v1/runs', payload: body });
  expect(response.statusCode).toBe(202);
  const done: RunRecord = await env.client.wait(response.json<{ id: string }>().id, { timeoutMs: 30_000 });
  expect(done).toMatchObject({ status: 'completed' });
  return done;
}

async function conversation(env: ApiTestEnv, conversationId: string): Promise<ConversationRecord> {
  const response = await env.as(KEYS.acmeProducer, { method: 'GET', url: `/v1/conversations/${conversationId}` });
  expect(response.statusCode).toBe(200);
  return response.json<ConversationRecord>();
}

/**
 * A user holding a two-turn conversation with each built-in agent, through the HTTP API, a worker on the
 * real Redis and the scripted OpenAI server (the real openai SDK over HTTP). The second turn's first
 * model request must hold the first turn's question and answer and then its own question; the
 * conversation must list both turns' questions and answers.
 */
describe('a two-turn conversation with each built-in agent', () => {
  const data = tempDirectory('agentq-agent-conversations-');
  let rag: RagTestEnv<ApiTestEnv>;
  let env: ApiTestEnv;
  let server: ScriptedOpenAIServer;
  beforeAll(async () => {
    rag = await startRagTestEnv(startApiTestEnv, data.path, { model: {} });
    ({ env } = rag);
    server = rag.server!;
    await ingestFolder(rag.ingest, writeDocs(data.path, 'paris', RAG_DOCS), { collection: 'paris', tenant: 'acme' });
  });
  afterAll(async () => {
    await rag.close();
    data.remove();
  });
  beforeEach(() => server.reset());

  /** Answers `answer to <the latest question>`; reflect's judge approves every draft. */
  const echo = (request: ScriptedChatRequest): ScriptedResponse => {
    const messages = messagesOf(request);
    if (messages[0]?.content === DEFAULT_JUDGE_SYSTEM_PROMPT)
      return { content: JSON.stringify({ approved: true, critique: '' }) };
    return { content: `answer to ${lastUser(messages)}` };
  };

  /**
   * Two turns of `graph` on one conversation; → the second turn's first model request (as `role: text`
   * lines), the conversation's messages, and both runs.
   */
  async function twoTurns(graph: string, conversationId: string, inputs: [unknown, unknown]) {
    const first = await turn(env, { graph, input: inputs[0], conversationId });
    const before = server.chatRequests().length;
    const second = await turn(env, { graph, input: inputs[1], conversationId });
    const request = server.chatRequests()[before];
    expect(request).toBeDefined();
    const record = await conversation(env, conversationId);
    expect(record.latestCompletedRunId).toBe(second.id);
    return { sent: messagesOf(request!), messages: record.messages as Message[], first, second };
  }

  it('react-agent: the second request holds turn 1 and then the new query; the conversation lists both turns', async () => {
    server.setScript(echo);
    const { sent, messages, second } = await twoTurns('react-agent', 'conv-react', [
      { query: 'My name is Ada.', tools: [] },
      { query: 'What is my name?', tools: [] },
    ]);
    expect(sent.map(line)).toEqual([
      `system: ${DEFAULT_REACT_SYSTEM_PROMPT}`,
      'user: My name is Ada.',
      'assistant: answer to My name is Ada.',
      'user: What is my name?',
    ]);
    expect(second.output).toEqual({ answer: 'answer to What is my name?' });
    expect(messages.map(line)).toEqual([...sent.map(line), 'assistant: answer to What is my name?']);
    expect(turnsOf(messages)).toHaveLength(4);
  });

  it('rag-agent with a model: the second request holds turn 1 and then the new question; the conversation lists both answers as text', async () => {
    // Search first; once a search result is the latest message, answer citing its first passage.
    server.setScript((request) => {
      const messages = messagesOf(request);
      const result = messages.at(-1)?.role === 'tool' ? messages.at(-1)!.content : null;
      const id = /^\[([0-9a-f]{6})\]/m.exec(result ?? '')?.[1];
      const question = lastUser(messages);
      return id
        ? {
            toolCalls: [
              { name: 'final_answer', arguments: { answer: `answer to ${question} [${id}]`, citations: [id] } },
            ],
          }
        : { toolCalls: [{ name: 'search', arguments: { query: question } }] };
    });
    const { sent, messages, first, second } = await twoTurns('rag-agent', 'conv-rag', [
      { query: 'Who drew the first sketch of the Eiffel Tower?', collection: 'paris' },
      { query: 'Where was he born?', collection: 'paris' },
    ]);
    expect([first, second].map((run) => (run.output as RagOutput).answer)).toEqual([
      'answer to Who drew the first sketch of the Eiffel Tower?',
      'answer to Where was he born?',
    ]);
    // The history keeps the answers with their [id] markers (the output leaves them out without `citations`).
    const recorded = turnsOf(messages).filter((text) => text.startsWith('assistant: '));
    expect(recorded).toEqual([
      expect.stringMatching(/^assistant: answer to Who drew the first sketch of the Eiffel Tower\? \[[0-9a-f]{6}\]$/),
      expect.stringMatching(/^assistant: answer to Where was he born\? \[[0-9a-f]{6}\]$/),
    ]);
    expect(sent[0]).toEqual({ role: 'system', content: ragSystemPrompt(3) });
    // Turn 1's searches stay in the history; its question and answer (as text) come before the new question, last.
    expect(turnsOf(sent)).toEqual([
      'user: Who drew the first sketch of the Eiffel Tower?',
      recorded[0],
      'user: Where was he born?',
    ]);
    expect(sent.at(-1)).toEqual({ role: 'user', content: 'Where was he born?' });
    expect(turnsOf(messages)).toEqual([
      'user: Who drew the first sketch of the Eiffel Tower?',
      recorded[0],
      'user: Where was he born?',
      recorded[1],
    ]);
  });

  it('reflect: the second writer request holds turn 1 and then the new task; the conversation lists both turns', async () => {
    server.setScript(echo);
    const { sent, messages, second } = await twoTurns('reflect', 'conv-reflect', [
      { task: 'Write a haiku about rain.' },
      { task: 'Now make it about snow.' },
    ]);
    expect(sent.map(line)).toEqual([
      `system: ${DEFAULT_WRITER_SYSTEM_PROMPT}`,
      'user: Write a haiku about rain.',
      'assistant: answer to Write a haiku about rain.',
      'user: Now make it about snow.',
    ]);
    expect(second.output).toMatchObject({ answer: 'answer to Now make it about snow.', approved: true, iterations: 1 });
    expect(messages.map(line)).toEqual([...sent.map(line), 'assistant: answer to Now make it about snow.']);
    expect(turnsOf(messages)).toHaveLength(4);
  });

  it('multi-agent: the second lead request holds turn 1 and then the new query; the conversation lists both turns', async () => {
    server.setScript(echo);
    const expert = { name: 'historian', description: 'the history of Paris landmarks' };
    const { sent, messages, second } = await twoTurns('multi-agent', 'conv-multi', [
      { query: 'When was the Eiffel Tower built?', experts: [expert] },
      { query: 'And who designed it?', experts: [expert] },
    ]);
    expect(sent.map(line)).toEqual([
      `system: ${expertSystemPrompt(expert)}`,
      'user: When was the Eiffel Tower built?',
      'assistant: answer to When was the Eiffel Tower built?',
      'user: And who designed it?',
    ]);
    expect(second.output).toMatchObject({ answer: 'answer to And who designed it?', lead: 'historian' });
    expect(messages.map(line)).toEqual([...sent.map(line), 'assistant: answer to And who designed it?']);
    expect(turnsOf(messages)).toHaveLength(4);
  });
});

/** What the run page's transcript shows: each message's role and text. */
function transcriptOf(html: string): string[] {
  const transcript = /<div id="transcript">([\s\S]*?)<h2>/.exec(html)?.[1] ?? '';
  const unescape = (text: string) =>
    text
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"')
      .replace(/&#39;|&#x27;/g, "'")
      .replace(/&amp;/g, '&');
  return [...transcript.matchAll(/class="msg msg-(\w+)"[^>]*>[\s\S]*?<div class="content">([\s\S]*?)<\/div>/g)].map(
    (match) => `${match[1]}: ${unescape(match[2]!)}`,
  );
}

describe('a two-turn conversation with rag-agent without a model (the extractive answerer)', () => {
  const data = tempDirectory('agentq-extractive-conversations-');
  let rag: RagTestEnv<ApiTestEnv>;
  let env: ApiTestEnv;
  beforeAll(async () => {
    rag = await startRagTestEnv(startApiTestEnv, data.path);
    ({ env } = rag);
    await ingestFolder(rag.ingest, writeDocs(data.path, 'paris', RAG_DOCS), { collection: 'paris', tenant: 'acme' });
  });
  afterAll(async () => {
    await rag.close();
    data.remove();
  });

  it('each turn records its question and answer: the conversation and the run page show both turns', async () => {
    const questions = ['Who drew the first sketch of the Eiffel Tower?', 'Where does the Louvre stand?'];
    const runs = [];
    for (const query of questions)
      runs.push(
        await turn(env, { graph: 'rag-agent', input: { query, collection: 'paris' }, conversationId: 'conv-x' }),
      );
    const answers = runs.map((run) => (run.output as RagOutput).answer);
    expect(runs.map((run) => (run.output as RagOutput).model)).toEqual(['extractive', 'extractive']);
    expect(answers[0]).toContain('Koechlin drew the first sketch of the Eiffel Tower in 1884.');
    expect(answers[1]).toContain('Louvre');
    // The history keeps each answer with the [id] markers of the passages it cites (the output, without
    // `citations`, leaves them out): the same text once they are taken out, and at least one is there.
    const expected = [
      `user: ${questions[0]}`,
      `assistant: ${answers[0]}`,
      `user: ${questions[1]}`,
      `assistant: ${answers[1]}`,
    ];
    const unmarked = (lines: string[]) => {
      for (const text of lines.filter((entry) => entry.startsWith('assistant: ')))
        expect(text).toMatch(/ \[[0-9a-f]{6}\]/);
      return lines.map((text) => text.replace(/ \[[0-9a-f]{6}\]/g, ''));
    };

    const record = await conversation(env, 'conv-x');
    expect(record.latestCompletedRunId).toBe(runs[1]!.id);
    expect(unmarked((record.messages as Message[]).map(line))).toEqual(expected);

    // The run page's transcript: the first run its own turn, the second the whole conversation so far.
    const pages = await Promise.all(
      runs.map((run) => env.as(KEYS.acmeProducer, { method: 'GET', url: `/runs/${run.id}` })),
    );
    expect(pages.map((page) => page.statusCode)).toEqual([200, 200]);
    expect(pages[1]!.body).not.toContain('No messages yet');
    expect(unmarked(transcriptOf(pages[0]!.body))).toEqual(expected.slice(0, 2));
    expect(unmarked(transcriptOf(pages[1]!.body))).toEqual(expected);
  });
});
