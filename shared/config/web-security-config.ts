import { z } from 'zod';

const int = (fallback: number, min = 0) => z.coerce.number().int().min(min).default(fallback);
const bool = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no'])
    .default(fallback ? 'true' : 'false')
    .transform((value) => value === 'true' || value === '1' || value === 'yes');

/**
 * The web pages' security settings (issue 35 items 7 and 8), one block so they can be ported as a unit:
 * config.ts spreads `webSecurityEnv` into its envSchema and `webSecurityConfigOf` into the Config.
 */
export const webSecurityEnv = {
  /** Trust X-Forwarded-* from: `false` (none), `true` (any), a hop count, or addresses/CIDRs, comma-separated. */
  AGENTQ_TRUST_PROXY: z
    .string()
    .default('false')
    .transform((value, context): TrustProxy => {
      const text = value.trim();
      if (/^(false|0|no|)$/i.test(text)) return false;
      if (/^(true|yes)$/i.test(text)) return true;
      if (/^\d+$/.test(text)) return Number(text);
      const addresses = text.split(',').map((item) => item.trim());
      if (addresses.every((item) => /^[0-9A-Fa-f.:]+(\/\d{1,3})?$/.test(item))) return addresses;
      context.addIssue({
        code: 'custom',
        message: `'${value}' must be true, false, a hop count, or proxy addresses/CIDRs separated by commas (e.g. 10.0.0.0/8,127.0.0.1)`,
      });
      return false;
    }),
  /** Serve /docs and /docs/json without a key. */
  AGENTQ_PUBLIC_DOCS: bool(false),
  /** Failed authentications per client address per minute before 429; 0 = no limit. */
  AGENTQ_AUTH_FAILURES_PER_MINUTE: int(20),
};

/** Fastify's trustProxy: which proxies' X-Forwarded-For/-Proto/-Host the API believes. */
export type TrustProxy = boolean | number | string[];

export interface WebSecurityConfig {
  /**
   * Which proxies' X-Forwarded-* headers are believed (AGENTQ_TRUST_PROXY): the client address that
   * failed-authentication throttling counts, and https, which makes sign-in cookies `Secure`. @default false
   */
  trustProxy: TrustProxy;
  /** /docs and /docs/json without a key (AGENTQ_PUBLIC_DOCS). @default false */
  publicDocs: boolean;
  /** Failed authentications per client address per minute before 429 (AGENTQ_AUTH_FAILURES_PER_MINUTE); 0 = off. @default 20 */
  authFailuresPerMinute: number;
}

export function webSecurityConfigOf(e: z.infer<z.ZodObject<typeof webSecurityEnv>>): WebSecurityConfig {
  return {
    trustProxy: e.AGENTQ_TRUST_PROXY,
    publicDocs: e.AGENTQ_PUBLIC_DOCS,
    authFailuresPerMinute: e.AGENTQ_AUTH_FAILURES_PER_MINUTE,
  };
}
