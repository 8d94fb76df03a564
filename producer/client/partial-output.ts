import type { RunRecord } from '../../shared/contracts/run-record.js';

/**
 * A cancelled run's record with what it had got to (in every terminal state the last committed
 * context is kept and readable, docs/concepts/runs-and-steps.md): `output.partial` is the run's state as of its last
 * committed step — e.g. react-agent's `answer`, `toolRounds`, `pendingToolCalls` — beside the history
 * (`messages`) that the run keeps anyway. Built when the record is read, so cancelling writes nothing
 * more; other records are returned as they are.
 */
export async function withPartialOutput(
  record: RunRecord,
  readState: (runId: string) => Promise<Record<string, unknown>>,
): Promise<RunRecord> {
  if (record.status !== 'cancelled' || (record.output !== null && record.output !== undefined)) return record;
  return { ...record, output: { partial: await readState(record.id) } };
}
