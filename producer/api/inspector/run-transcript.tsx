import type { Message } from '../../../shared/contracts/run-record.js';
import { READ_BOUNDS } from '../read-bounds.js';
import { clipped, Json } from './clipped-json.js';

/** One message of the transcript; `index` is its position in the run's whole history. */
export function MessageView({ message, index }: { message: Message; index: number }) {
  return (
    <div class={`msg msg-${message.role}`} data-index={index}>
      <div class="role">
        {message.role === 'tool' ? (
          <>
            tool result <span class="muted">{message.tool_call_id ?? ''}</span>
          </>
        ) : (
          message.role
        )}
      </div>
      {message.content ? (
        <div class="content">{clipped(shownContent(message.content), READ_BOUNDS.pageTextChars)}</div>
      ) : null}
      {(message.tool_calls ?? []).map((call) => {
        let args: unknown = call.function.arguments;
        try {
          args = JSON.parse(call.function.arguments);
        } catch {
          // Shown as sent.
        }
        return (
          <div class="tool-call">
            <b>→ {call.function.name}</b> <span class="muted">{call.id}</span>
            <Json value={args} max={READ_BOUNDS.pageTextChars} />
          </div>
        );
      })}
    </div>
  );
}

/** A message's content as the page shows it: its text, and each image part by its URL (a data: URL cut short). */
function shownContent(content: NonNullable<Message['content']>): string {
  if (typeof content === 'string') return content;
  return content
    .map((part) =>
      part.type === 'text'
        ? part.text
        : `[image ${part.image_url.url.length > 80 ? `${part.image_url.url.slice(0, 80)}…` : part.image_url.url}]`,
    )
    .join('\n');
}
