import { batchRunParts } from '../../shared/operations/batches/batch-meta.js';

/** One model call of a step, as a provider batch names it (the `custom_id` of its request line). */
interface ProviderBatchCall {
  runId: string;
  /** `s<superstep>.t<task>` */
  stepId: string;
  /** The call's memo key within the step. */
  key: string;
  /** The step's attempt: a retried step (after an error answer) makes another call. */
  attempt: number;
}

/** `<run id>|<step id>|<memo key>|<attempt>`: run ids and step ids never contain `|`. */
export function callIdOf({ runId, stepId, key, attempt }: ProviderBatchCall): string {
  return `${runId}|${stepId}|${key}|${attempt}`;
}

/** The call a custom id names, or undefined for an id agentq did not make (a results file's unknown line). */
export function parseCallId(customId: string): (ProviderBatchCall & { superstep: number; task: number }) | undefined {
  const parts = customId.split('|');
  if (parts.length < 4) return undefined;
  const runId = parts[0]!;
  const stepId = parts[1]!;
  const attempt = Number(parts.at(-1));
  const key = parts.slice(2, -1).join('|');
  const step = /^s(\d+)\.t(\d+)$/.exec(stepId);
  if (!step || !Number.isSafeInteger(attempt) || runId === '' || key === '') return undefined;
  return { runId, stepId, key, attempt, superstep: Number(step[1]), task: Number(step[2]) };
}

/** The batch a run belongs to, from its id (`<batch id>.i<n>`, agentq's own namespace), or undefined. */
export function batchIdOfRun(runId: string): string | undefined {
  if (!runId.startsWith('bat_') || !/\.i\d+$/.test(runId)) return undefined;
  return batchRunParts(runId).prefix.slice(0, -'.i'.length);
}
