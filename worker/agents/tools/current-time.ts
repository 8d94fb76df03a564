import { z } from 'zod';
import { defineTool } from '../../../shared/ports/define-tool.js';

/** Built-in tool: the current time, so the model does not rely on its training cut-off. */
export const currentTimeTool = defineTool({
  name: 'current_time',
  description:
    'Returns the current date and time: ISO 8601 in UTC, and the local time in an IANA time zone when one is given.',
  input: z.object({
    timezone: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .describe('IANA time zone, e.g. "Europe/Paris" or "America/New_York"; default UTC'),
  }),
  execute: ({ timezone }) => {
    const now = new Date();
    if (!timezone) return { iso: now.toISOString(), timezone: 'UTC' };
    let local: string;
    try {
      local = new Intl.DateTimeFormat('sv-SE', {
        timeZone: timezone,
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        second: '2-digit',
        hourCycle: 'h23',
        timeZoneName: 'longOffset',
      }).format(now);
    } catch {
      throw new Error(
        `unknown time zone '${timezone}': use an IANA name such as 'Europe/Paris', 'Asia/Tokyo' or 'UTC'`,
      );
    }
    return { iso: now.toISOString(), timezone, local };
  },
});
