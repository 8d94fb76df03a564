import { describe, expect, it } from 'vitest';
import { contentPartSchema, userContentPartsSchema } from '../../shared/contracts/content-parts.js';
import { contentText, type Message } from '../../shared/contracts/run-record.js';
import { validateHistory } from '../../shared/contracts/validate-history.js';
import { estimatePromptTokens, IMAGE_TOKENS } from '../../shared/llm/estimate-tokens.js';
import { missingVariables, renderTemplate } from '../../worker/agents/schemas/message-template.js';
import { questionsAndAnswers } from '../../worker/runtime/memory/conversation-history.js';

const image = (url: string, detail?: 'low' | 'high') => ({
  type: 'image_url' as const,
  image_url: { url, ...(detail ? { detail } : {}) },
});

describe('content parts (issue 40)', () => {
  it('accepts http(s) and data:image URLs, and refuses every other scheme with the reason', () => {
    for (const url of ['https://example.com/a.png', 'http://example.com/a.jpg', 'data:image/png;base64,AAAA'])
      expect(contentPartSchema.safeParse(image(url)).success).toBe(true);
    for (const url of [
      'file:///etc/passwd',
      'ftp://example.com/a.png',
      'data:text/html,<b>x</b>',
      'javascript:alert(1)',
      'not a url',
    ]) {
      const parsed = contentPartSchema.safeParse(image(url));
      expect(parsed.success).toBe(false);
      expect(parsed.error?.issues[0]?.message).toMatch(/url must be an http:\/\/, https:\/\/ or data:image/);
      expect(parsed.error?.issues[0]?.path).toEqual(['image_url', 'url']);
    }
    expect(userContentPartsSchema.safeParse([image('https://example.com/a.png')]).success).toBe(false);
    expect(
      userContentPartsSchema.safeParse([{ type: 'text', text: 'what is it?' }, image('https://e.x/a.png')]).success,
    ).toBe(true);
  });

  it('a history with image parts is valid for I3, reads as text, and counts its images in the estimate', async () => {
    const withImages: Message = {
      role: 'user',
      content: [{ type: 'text', text: 'What is this?' }, image('https://e.x/a.png', 'low'), image('https://e.x/b.png')],
    };
    const history: Message[] = [
      { role: 'system', content: 'Be brief.' },
      withImages,
      { role: 'assistant', content: 'Cats.' },
    ];
    expect(validateHistory(history)).toEqual([]);
    expect(contentText(withImages.content)).toBe('What is this?\n[image]\n[image]');
    const textOnly = await estimatePromptTokens([{ role: 'user', content: 'What is this?' }]);
    expect(await estimatePromptTokens([withImages])).toBe(textOnly + IMAGE_TOKENS.low + IMAGE_TOKENS.high);
    // A data: URL's bytes are not text the model reads: a big picture costs an image, not its base64.
    const big: Message = {
      role: 'user',
      content: [{ type: 'text', text: 'x' }, image(`data:image/png;base64,${'A'.repeat(100_000)}`)],
    };
    expect(await estimatePromptTokens([big])).toBeLessThan(1000);
  });
});

describe('message templates and the answers-only memory (issue 40)', () => {
  it('fills {{name}} in one pass, names a variable with no value, and leaves values unexpanded', () => {
    expect(renderTemplate('Hi {{ name }}, {{greeting}}!', { name: 'Ada', greeting: 'welcome' }, 'query')).toBe(
      'Hi Ada, welcome!',
    );
    expect(renderTemplate('{{a}}', { a: '{{b}}', b: 'no' }, 'query')).toBe('{{b}}');
    expect(missingVariables('{{a}} {{b}} {{a}}', { a: 'x' })).toEqual(['b']);
    expect(() => renderTemplate('You are {{persona}}.', {}, 'the system template')).toThrow(
      /variables: the system template uses \{\{persona\}\} but variables has no value for it/,
    );
  });

  it('keeps the system prompt, the questions and the final answers, and drops tool traffic', () => {
    const history: Message[] = [
      { role: 'system', content: 's' },
      { role: 'user', content: 'q1' },
      {
        role: 'assistant',
        content: 'thinking',
        tool_calls: [{ id: 'c', type: 'function', function: { name: 't', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c', content: 'r' },
      { role: 'assistant', content: 'a1' },
    ];
    expect(questionsAndAnswers(history).map((message) => message.content)).toEqual(['s', 'q1', 'a1']);
    expect(validateHistory(questionsAndAnswers(history))).toEqual([]);
  });
});
