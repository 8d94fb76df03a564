/** A moderation model's verdict on one text. */
export interface ModerationVerdict {
  flagged: boolean;
  /** Categories that were flagged, e.g. `harassment`. */
  categories: string[];
}

/**
 * A moderation model (an OpenAI-compatible `/v1/moderations` endpoint, MODERATION_MODEL). Like every
 * port it does not retry: it throws an `AgentqError` whose `retryable` tells the step what to do.
 */
export interface Moderator {
  readonly modelId: string;
  moderate(text: string, options?: { abortSignal?: AbortSignal }): Promise<ModerationVerdict>;
}
