import type { ContentPart, Message } from '../../../shared/contracts/run-record.js';
import type { ReactAgentInput } from '../schemas/react-agent-input.js';
import { renderTemplate } from '../schemas/message-template.js';

/** An image part of a user message (OpenAI's content-part format). */
export type ImagePart = Extract<ContentPart, { type: 'image_url' }>;

/**
 * A graph's message templates (AiServices' @SystemMessage / @UserMessage): `{{name}}` takes the run's
 * `variables`; in the user template `{{query}}` is the run's query. A run's own `system` replaces the
 * system template.
 */
export interface MessageTemplates {
  /** The system message, e.g. `You are {{persona}}. Answer in {{language}}.` */
  system?: string;
  /** The user message around the run's query, e.g. `Answer for a {{audience}}: {{query}}` */
  user?: string;
}

/** What a react-agent run's turn says: the query's text, its images, and the system prompt (null: the default). */
interface ReactTurn {
  query: string;
  images: ImagePart[];
  system: string | null;
}

/**
 * The run's turn from its input and the graph's templates. The run's own `query` and `system` are
 * templates only when it sends `variables` (otherwise braces are plain text); a graph's templates always
 * are. A variable without a value is INVALID_INPUT naming it (the input schema already refused the run's own).
 */
export function reactTurnOf(input: ReactAgentInput, templates: MessageTemplates = {}): ReactTurn {
  const variables = input.variables ?? {};
  const own = (text: string, what: string) => (input.variables ? renderTemplate(text, variables, what) : text);
  const parts = typeof input.query === 'string' ? [{ type: 'text' as const, text: input.query }] : input.query;
  const text = parts
    .map((part, index) =>
      part.type === 'text' ? own(part.text, typeof input.query === 'string' ? 'query' : `query.${index}.text`) : '',
    )
    .filter((piece) => piece !== '')
    .join('\n');
  const images = parts.filter((part): part is ImagePart => part.type === 'image_url');
  const query = templates.user
    ? renderTemplate(templates.user, { ...variables, query: text }, 'the user template')
    : text;
  const system =
    input.system !== undefined
      ? own(input.system, 'system')
      : templates.system
        ? renderTemplate(templates.system, variables, 'the system template')
        : null;
  return { query, images, system };
}

/** The user message of a turn: the text (with any retrieved passages) and, when it has images, its image parts. */
export function userTurnMessage(text: string, images: readonly ImagePart[]): Message {
  return images.length === 0
    ? { role: 'user', content: text }
    : { role: 'user', content: [{ type: 'text', text }, ...images] };
}
