/** A one-line progress bar with an ETA on stderr — only when stderr is a terminal (never in logs or pipes). */
export class ProgressBar {
  private readonly started = Date.now();
  private readonly enabled: boolean;

  constructor(
    private readonly label: string,
    private readonly stream: NodeJS.WriteStream = process.stderr,
  ) {
    this.enabled = Boolean(stream.isTTY);
  }

  update(done: number, total: number, detail = ''): void {
    if (!this.enabled || total <= 0) return;
    const width = 30;
    const share = Math.min(1, done / total);
    const filled = Math.round(share * width);
    const elapsed = (Date.now() - this.started) / 1000;
    const eta = done > 0 && done < total ? ` eta ${formatSeconds((elapsed / done) * (total - done))}` : '';
    this.stream.write(`\r${this.label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}${eta}${detail ? ` ${detail}` : ''}\u001b[K`);
  }

  finish(): void {
    if (this.enabled) this.stream.write('\n');
  }
}

function formatSeconds(seconds: number): string {
  if (seconds < 60) return `${Math.ceil(seconds)}s`;
  const minutes = Math.floor(seconds / 60);
  return `${minutes}m${String(Math.ceil(seconds % 60)).padStart(2, '0')}s`;
}
