import { createHash, randomBytes } from 'node:crypto';
import type { RedisConnection } from '../../../shared/redis/connect-redis.js';
import type { Keys } from '../../../shared/store/keys.js';

/** A flash notice waits this long for the page it is for (the redirect that follows the action). */
const FLASH_SECONDS = 60;

function tokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Name of the dashboard's sign-in cookie (Path=/admin). */
export const SESSION_COOKIE = 'agentq_session';
/** The inspector's sign-in cookie: Path=/ so it reaches /runs, /batches and /docs (the dashboard's stops at /admin). */
export const INSPECTOR_COOKIE = 'agentq_inspect';

/**
 * A sign-in cookie: HttpOnly, SameSite=Strict, and Secure when the request came over https (directly, or
 * through a proxy AGENTQ_TRUST_PROXY trusts, whose X-Forwarded-Proto then counts). An empty token clears it.
 */
export function sessionCookie(
  name: string,
  token: string,
  { path, maxAgeSeconds, secure }: { path: string; maxAgeSeconds: number; secure: boolean },
): string {
  return `${name}=${token}; Path=${path}; HttpOnly; SameSite=Strict; Max-Age=${token ? maxAgeSeconds : 0}${secure ? '; Secure' : ''}`;
}

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
    const hash = tokenHash(token);
    // Two commands: the keys may live in different cluster slots.
    await Promise.all([
      this.redis.del(this.keys.dashboardSession(hash)),
      this.redis.del(this.keys.dashboardFlash(hash)),
    ]);
  }

  /**
   * Leaves `notice` for the session's next view of `page`: the result of a form's action travels in the
   * session, not in the URL, so no link can put words of its own on a real page.
   */
  async flash(token: string, page: string, notice: string): Promise<void> {
    await this.redis.set(
      this.keys.dashboardFlash(tokenHash(token)),
      JSON.stringify({ page, notice }),
      'EX',
      FLASH_SECONDS,
    );
  }

  /** The notice left for `page`, once: it is gone after this read (also when it was for another page). */
  async takeFlash(token: string, page: string): Promise<string | null> {
    const stored = await this.redis.getdel(this.keys.dashboardFlash(tokenHash(token)));
    if (!stored) return null;
    const flash = JSON.parse(stored) as { page?: unknown; notice?: unknown };
    return flash.page === page && typeof flash.notice === 'string' ? flash.notice : null;
  }

  private key(token: string): string {
    return this.keys.dashboardSession(tokenHash(token));
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
