import { createHash, randomBytes } from 'node:crypto';
import type { RedisConnection } from '../../../shared/adapters/redis/connect-redis.js';
import type { Keys } from '../../../shared/store/keys.js';

/** Name of the dashboard's sign-in cookie. */
export const SESSION_COOKIE = 'agentq_session';

/**
 * Dashboard sign-ins, so a browser (which cannot add a Bearer header to Bull Board's own requests) can
 * use the dashboard: the cookie holds a random token; Redis holds only its hash and the key id it stands
 * for, with a TTL, so every API process honours it and a key removed from the config ends its sessions.
 */
export class DashboardSessions {
  constructor(
    private readonly redis: RedisConnection,
    private readonly keys: Keys,
    readonly ttlSeconds: number,
  ) {}

  async create(keyId: string): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    await this.redis.set(this.key(token), keyId, 'EX', this.ttlSeconds);
    return token;
  }

  /** The key id the session stands for, or null (unknown or expired). */
  async find(token: string): Promise<string | null> {
    if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
    return this.redis.get(this.key(token));
  }

  async delete(token: string): Promise<void> {
    await this.redis.del(this.key(token));
  }

  private key(token: string): string {
    return this.keys.dashboardSession(createHash('sha256').update(token).digest('hex'));
  }
}

/** The value of one cookie from a Cookie header, or undefined. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return rest.join('=');
  }
  return undefined;
}
