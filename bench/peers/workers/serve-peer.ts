/**
 * The IPC side every peer worker shares (the parent drives it with bench/lib/forked-worker.ts):
 * - `{type: 'measure', kind, inFlight, runs, tag}` → `{type: 'measured', elapsedMs, timings}`: a closed
 *   loop of `runs` runs, `inFlight` at once, each started and awaited in this process;
 * - `{type: 'submit', kind, runIds}` → `{type: 'submitted'}`: starts the runs durably without waiting
 *   (the crash workload kills this process while they run; the system brings them back);
 * - `{type: 'resume', kind, runIds}` → `{type: 'resumed'}`: a system without a queue of its own (LangGraph)
 *   is handed the runs a killed process left unfinished; the others bring them back by themselves;
 * - `{type: 'finished', runId}` is sent by the peer when a run's last step is done (recovered runs too);
 * - `{type: 'stop'}` closes and exits.
 */
import { closedLoop } from '../../lib/closed-loop.js';
import type { StepTiming } from '../../lib/step-timings.js';
import type { StepKind } from '../peer-steps.js';

export interface Peer {
  /** Runs one run to its end (the caller waits for it). */
  runOne(runId: string, kind: StepKind): Promise<void>;
  /** Starts one run durably and returns once the system has accepted it. */
  submit(runId: string, kind: StepKind): Promise<void>;
  /** Goes on with runs a killed process left unfinished (only systems that do not do it themselves). */
  resume?(runIds: string[], kind: StepKind): Promise<void>;
  close(): Promise<void>;
}

type Message =
  | { type: 'measure'; kind: StepKind; inFlight: number; runs: number; tag: string }
  | { type: 'submit'; kind: StepKind; runIds: string[] }
  | { type: 'resume'; kind: StepKind; runIds: string[] }
  | { type: 'stop' };

const errorText = (error: unknown) => (error instanceof Error ? (error.stack ?? error.message) : String(error));

export function reportFinished(runId: string): void {
  process.send?.({ type: 'finished', runId });
}

export function servePeer(peer: Peer, timings: Map<string, StepTiming[]>): void {
  const measure = async ({ kind, inFlight, runs, tag }: Extract<Message, { type: 'measure' }>) => {
    const runIds: string[] = [];
    const loop = closedLoop(inFlight, runs, async (index) => {
      const runId = `${tag}-${index}`;
      runIds.push(runId);
      await peer.runOne(runId, kind);
      loop.finished();
    });
    const elapsedMs = await loop.done;
    const measured = runIds.map((runId) => timings.get(runId) ?? []);
    timings.clear();
    return { elapsedMs, timings: measured };
  };
  process.on('message', (message: Message) => {
    if (message.type === 'measure')
      measure(message).then(
        (result) => process.send?.({ type: 'measured', ...result }),
        (error: unknown) => process.send?.({ type: 'measured', error: errorText(error) }),
      );
    if (message.type === 'submit')
      Promise.all(message.runIds.map((runId) => peer.submit(runId, message.kind))).then(
        () => process.send?.({ type: 'submitted' }),
        (error: unknown) => process.send?.({ type: 'submitted', error: errorText(error) }),
      );
    if (message.type === 'resume')
      (peer.resume?.(message.runIds, message.kind) ?? Promise.resolve()).then(
        () => process.send?.({ type: 'resumed' }),
        (error: unknown) => process.send?.({ type: 'resumed', error: errorText(error) }),
      );
    if (message.type === 'stop') void peer.close().finally(() => process.exit(0));
  });
  process.send?.({ type: 'ready' });
}
