import type { Logger } from './logger.js';

interface Kind {
  /** The first line of this kind may be written again from then on. */
  openAt: number;
  /** Lines of this kind held back since the last one written. */
  held: number;
  heldSince: number;
  fields: Record<string, unknown>;
  message: string;
}

/**
 * Repeated warnings as one line per kind per interval, with a count (a worker logged ~70
 * warnings a second while Redis was full). The first warning of a kind is written at once; the ones
 * after it within `intervalMs` are counted, and written as one line (`repeated: n`, with the last one's
 * fields) when the interval ends, or at the next warning of the kind after it, or on `flush()`.
 * `intervalMs` 0 writes every warning (AGENTQ_WARN_INTERVAL_MS=0).
 */
export class WarningGate {
  private readonly kinds = new Map<string, Kind>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly logger: Logger,
    private readonly intervalMs: number,
  ) {}

  /** `kind` groups the warnings counted together (e.g. the message and the error's class). */
  warn(kind: string, fields: Record<string, unknown>, message: string): void {
    if (this.intervalMs <= 0) {
      this.logger.warn(fields, message);
      return;
    }
    const now = Date.now();
    const entry = this.kinds.get(kind);
    if (entry && now < entry.openAt) {
      if (entry.held === 0) entry.heldSince = now;
      entry.held += 1;
      entry.fields = fields;
      entry.message = message;
      this.schedule();
      return;
    }
    if (entry && entry.held > 0) this.write(entry, now);
    this.logger.warn(fields, message);
    this.kinds.set(kind, { openAt: now + this.intervalMs, held: 0, heldSince: now, fields, message });
  }

  /** Writes the counts held back so far (a process that stops says what it did not print). */
  flush(): void {
    const now = Date.now();
    for (const entry of this.kinds.values()) if (entry.held > 0) this.write(entry, now);
    this.kinds.clear();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private write(entry: Kind, now: number): void {
    this.logger.warn(
      { ...entry.fields, repeated: entry.held, overMs: now - entry.heldSince },
      `${entry.message} (repeated ${entry.held} times in ${now - entry.heldSince} ms)`,
    );
    entry.held = 0;
    entry.openAt = now + this.intervalMs;
  }

  /** One timer for all kinds: at each interval's end, the held counts are written and quiet kinds forgotten. */
  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const now = Date.now();
      let pending = false;
      for (const [kind, entry] of this.kinds) {
        if (entry.held > 0 && now >= entry.openAt) this.write(entry, now);
        else if (entry.held === 0 && now >= entry.openAt) this.kinds.delete(kind);
        if (entry.held > 0) pending = true;
      }
      if (pending) this.schedule();
    }, this.intervalMs);
    this.timer.unref();
  }
}

/** A kind for a warning about an error: the message's words without ids, numbers and addresses. */
export function warningKind(message: string, error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return `${message}: ${text.replace(/[0-9a-f]{8,}|\d+/gi, '#').slice(0, 80)}`;
}
