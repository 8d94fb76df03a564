import type { ListWindow } from '../../../shared/store/run-reads.js';

/** Which window of the run's steps and of its transcript a run page shows: their first positions, latest when absent. */
export interface RunPageWindows {
  steps?: number;
  messages?: number;
}

/** The run page's URL for these windows (no parameter: the latest of each). */
export function runPageHref(runId: string, windows: RunPageWindows): string {
  const query = new URLSearchParams();
  if (windows.steps !== undefined) query.set('steps', String(windows.steps));
  if (windows.messages !== undefined) query.set('messages', String(windows.messages));
  const search = query.toString();
  return `/runs/${encodeURIComponent(runId)}${search ? `?${search}` : ''}`;
}

/**
 * Where a window of a long list stands, with links to the windows before and after it: "earlier" moves
 * back one page size, "later" forward (to the latest once that reaches the end). The other list keeps
 * its window.
 */
export function ListWindowNav({
  name,
  noun,
  window,
  size,
  runId,
  windows,
}: {
  name: keyof RunPageWindows;
  noun: string;
  window: ListWindow<unknown>;
  size: number;
  runId: string;
  windows: RunPageWindows;
}) {
  const { from, total, items } = window;
  if (total <= items.length && from === 0) return null;
  const to = from + items.length;
  const href = (start: number | undefined) => runPageHref(runId, { ...windows, [name]: start });
  return (
    <p class="muted window-nav" id={`${name}-window`} data-from={String(from)} data-total={String(total)}>
      {from > 0 ? (
        <>
          <a id={`${name}-earlier`} href={href(Math.max(0, from - size))}>
            ← earlier {noun}
          </a>{' '}
        </>
      ) : null}
      {items.length === 0
        ? `no ${noun} past ${total}`
        : `${noun} ${from + 1}–${to} of ${total}${to >= total ? ' (the latest)' : ''}`}
      {to < total ? (
        <>
          {' '}
          <a id={`${name}-later`} href={href(to + size >= total ? undefined : to)}>
            later {noun} →
          </a>
        </>
      ) : null}
    </p>
  );
}
