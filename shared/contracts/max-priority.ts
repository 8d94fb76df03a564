/** BullMQ's largest job priority (2^21). Kept apart from the job schema so a module can use it without zod. */
export const MAX_PRIORITY = 2_097_152;
