/** What a webhook job carries: ids only (the URL and the record are read from the run store at delivery). */
export interface WebhookJobData {
  runId: string;
  /** The terminal status that triggered it; a run retried since is delivered again when it ends again. */
  status: 'completed' | 'failed' | 'cancelled';
}

/** One delivery job per run: a second terminal hook call for the same transition adds nothing. */
export function webhookJobId(runId: string): string {
  return `${runId}.webhook`;
}
