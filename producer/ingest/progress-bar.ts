import type { IngestProgress } from '../../shared/ingest/ingest-batch.js';

export interface ProgressBar {
  update(progress: Pick<IngestProgress, 'done' | 'failed' | 'total'>): void;
  /** Ends the bar's line. */
  finish(): void;
}

const WIDTH = 30;

/**
 * A one-line progress bar redrawn in place (`\r`) on a terminal. On anything else (a pipe, a log file,
 * CI) it draws nothing: stderr then stays free of control characters.
 */
export function createProgressBar(stream: NodeJS.WriteStream, label = 'ingesting'): ProgressBar {
  if (!stream.isTTY) return { update: () => undefined, finish: () => undefined };
  const started = Date.now();
  let drawn = false;
  return {
    update({ done, failed, total }) {
      const finished = done + failed;
      const filled = total === 0 ? WIDTH : Math.round((finished / total) * WIDTH);
      const rate = finished / Math.max(0.001, (Date.now() - started) / 1000);
      stream.write(`\r${label} [${'#'.repeat(filled)}${'-'.repeat(WIDTH - filled)}] ${finished}/${total} · done ${done} · failed ${failed} · ${rate.toFixed(1)} docs/s\u001b[K`);
      drawn = true;
    },
    finish() {
      if (drawn) stream.write('\n');
    },
  };
}
