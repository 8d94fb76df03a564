interface ProgressBar {
  /** `done` succeeded and `failed` failed, of `total`. */
  update(progress: { done: number; failed: number; total: number }): void;
  /** Ends the bar's line. */
  finish(): void;
}

const WIDTH = 30;

function formatSeconds(seconds: number): string {
  if (seconds < 60) return `${Math.ceil(seconds)}s`;
  return `${Math.floor(seconds / 60)}m${String(Math.ceil(seconds % 60)).padStart(2, '0')}s`;
}

/**
 * A one-line progress bar with rate and ETA, redrawn in place (`\r`) on a terminal. On anything else
 * (a pipe, a log file, CI) it draws nothing: stderr then stays free of control characters.
 */
export function createProgressBar(stream: NodeJS.WriteStream, label: string, unit: string): ProgressBar {
  if (!stream.isTTY) return { update: () => undefined, finish: () => undefined };
  const started = Date.now();
  let drawn = false;
  return {
    update({ done, failed, total }) {
      const finished = done + failed;
      const filled = total === 0 ? WIDTH : Math.round((Math.min(finished, total) / total) * WIDTH);
      const elapsed = Math.max(0.001, (Date.now() - started) / 1000);
      const rate = finished / elapsed;
      const eta = finished > 0 && finished < total ? ` · eta ${formatSeconds((total - finished) / rate)}` : '';
      stream.write(
        `\r${label} [${'#'.repeat(filled)}${'-'.repeat(WIDTH - filled)}] ${finished}/${total} · done ${done} · failed ${failed} · ${rate.toFixed(1)} ${unit}/s${eta}\u001b[K`,
      );
      drawn = true;
    },
    finish() {
      if (drawn) stream.write('\n');
    },
  };
}
