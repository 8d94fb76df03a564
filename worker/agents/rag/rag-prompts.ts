import type { Message } from '../../../shared/contracts/run-record.js';
import type { RetrievedPassage } from './retrieved-passage.js';

/** Characters of a passage shown to the model (the rest is cut, with a marker). @default 1500 */
const PASSAGE_CHARS_SHOWN = 1500;

/** The system prompt of `rag-agent` with a model: answer from retrieved passages only, cite them, stay within the rounds. */
export function ragSystemPrompt(maxIterations: number): string {
  return [
    "You answer questions using only passages from the user's documents, which you find with the tools.",
    '- Start with `search`, using a query derived from the question. Independent searches may be called at once.',
    '- If the passages do not answer the question, call `refine_and_search` with a reformulated query: other words, or a name a passage mentions that leads to the rest of the answer.',
    `- You have ${maxIterations} search round${maxIterations === 1 ? '' : 's'}. When the passages answer the question, or no rounds are left, call \`final_answer\`.`,
    '- State only what the passages say. Cite each fact with the id of its passage in square brackets, e.g. [3fa9c1], and list the ids in `citations`. Never cite an id no search returned.',
    '- If the passages do not contain the answer, say so plainly.',
  ].join('\n');
}

/** Said to the model when the search rounds are spent; it then gets only `final_answer`. */
export const RAG_FINAL_ANSWER_REQUEST =
  'No search rounds are left. Call final_answer now with what the retrieved passages say, citing their ids; say what remains unknown.';

/** Said to the model when it answers before any search: answers must rest on retrieved passages. */
export const RAG_SEARCH_FIRST =
  'Error: nothing has been retrieved yet, so there is nothing to cite. Call search first: answers must rest on retrieved passages.';

/** A search's result as the model reads it: each passage with its id, title, place and (cut) text. */
export function formatSearchResult(query: string, passages: readonly RetrievedPassage[], total: number): string {
  if (passages.length === 0) return `No passage matches "${query}". Try other words.`;
  const lines = [`Passages for "${query}" (best ${passages.length} of ${total}):`];
  for (const passage of passages) {
    const heading =
      passage.headingPath.length > 0 && passage.headingPath.at(-1) !== passage.title
        ? ` › ${passage.headingPath.at(-1)}`
        : '';
    const page = passage.page === null ? '' : `, page ${passage.page}`;
    const text =
      passage.text.length > PASSAGE_CHARS_SHOWN ? `${passage.text.slice(0, PASSAGE_CHARS_SHOWN)} […]` : passage.text;
    lines.push('', `[${passage.id}] ${passage.title}${heading} (${passage.path}${page})`, text);
  }
  return lines.join('\n');
}

/** What the stored history keeps of a search's result when retrieved content is not stored (`storeRetrievedContent: false`). */
export function retrievedContentNote(query: string): string {
  return `Passages for "${query}" were shown in the turn that searched; they are not kept in the conversation.`;
}

/** The prompt with each search result the history keeps only as a note put back (`storeRetrievedContent: false`). */
export function withRetrievedContent(
  messages: readonly Message[],
  retrieved: Readonly<Record<string, string>>,
): Message[] {
  return messages.map((message) =>
    message.role === 'tool' && message.tool_call_id !== undefined && retrieved[message.tool_call_id] !== undefined
      ? { ...message, content: retrieved[message.tool_call_id]! }
      : message,
  );
}
