import { channel, type Channel } from '../../../shared/graph/channels.js';
import type { Message } from '../../../shared/contracts/run-record.js';

/**
 * The state key of a graph whose runs may continue a conversation: false until the run's own question
 * joined the history. A conversation's run starts with the earlier turns already in its history (the
 * intake seeds them), so "the history is empty" cannot tell whether this run's question is still to add.
 * Null in runs admitted before the graph kept the key: those go by the history's length.
 */
export function turnStartedChannel(): Channel<boolean | null, boolean | null> {
  return channel.replace<boolean | null>(null);
}

/** What a step knows when it may have to open the run's turn. */
interface TurnOpening {
  /** The state's `turnStarted` (set it to false in `initialState`, true once the messages below are added). */
  turnStarted: boolean | null;
  /** The stored history's length before this step, earlier turns of the conversation included. */
  historyLength: number;
  /** The system prompt a run with no earlier history starts with; null: none. A later turn keeps the conversation's own. */
  system: string | null;
  /** The run's own user message: its query or task. */
  question: Message;
}

/** Whether this step still has to add the run's question (see `turnStartedChannel`). */
export function startsTurn({
  turnStarted,
  historyLength,
}: Pick<TurnOpening, 'turnStarted' | 'historyLength'>): boolean {
  return turnStarted === false || (turnStarted === null && historyLength === 0);
}

/**
 * The messages that open a run's turn, to send after the history and append with the step's answer:
 * the system prompt when there is no history yet, then the question; [] when the turn is already open.
 * Every built-in agent opens its turn through this, so a conversation's new question always reaches the
 * model and is recorded in the conversation, whichever agent holds it.
 */
export function openTurn(opening: TurnOpening): Message[] {
  if (!startsTurn(opening)) return [];
  const system: Message[] =
    opening.historyLength === 0 && opening.system !== null ? [{ role: 'system', content: opening.system }] : [];
  return [...system, opening.question];
}

/**
 * The messages that close a run's turn: `messages`, then the answer as the user got it, as a plain
 * assistant message, unless the last one already is the model's plain answer. An answer given as a
 * tool call's arguments (rag-agent's final_answer) or made without a model (the extractive answerer)
 * is otherwise not in the history as text: the run's transcript, a conversation's next turn and its
 * 'answers' memory would miss it.
 */
export function closeTurn(messages: readonly Message[], answer: string): Message[] {
  const last = messages.at(-1);
  const answered = last?.role === 'assistant' && !last.tool_calls?.length && last.content !== null;
  return answered ? [...messages] : [...messages, { role: 'assistant', content: answer }];
}
