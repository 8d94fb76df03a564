import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Config } from '../../../shared/config/config.js';
import { AgentqError } from '../../../shared/contracts/errors.js';
import { ID_PATTERN } from '../../../shared/contracts/ids.js';

const ROLES = ['producer', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** Who is calling: from the API key (or the open mode's stand-in). */
export interface Principal {
  tenant: string;
  role: Role;
  /** Short public id of the key (a prefix of its hash): rate limits and sessions name keys by it. */
  keyId: string;
}

interface Entry extends Principal {
  hash: Buffer;
}

/** Shorter keys are refused at start-up: they can be guessed. */
export const MIN_KEY_LENGTH = 16;

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/**
 * The API's keys, held only as SHA-256 hashes. A presented key is hashed and compared with every entry
 * in constant time, so neither the comparison nor the number of entries checked leaks which key matched.
 * No keys at all means the API runs open (see `isOpen`).
 */
export class ApiKeys {
  private constructor(private readonly entries: readonly Entry[]) {}

  /** From AGENTQ_API_KEYS and AGENTQ_API_KEYS_FILE (both may be set; their keys add up). */
  static fromConfig(config: Pick<Config, 'apiKeys' | 'apiKeysFile'>): ApiKeys {
    const entries = [...parseEntries(config.apiKeys ?? '', 'AGENTQ_API_KEYS')];
    if (config.apiKeysFile) {
      let text: string;
      try {
        text = readFileSync(config.apiKeysFile, 'utf8');
      } catch (error) {
        throw new AgentqError(
          'INVALID_INPUT',
          `AGENTQ_API_KEYS_FILE ${config.apiKeysFile} cannot be read (${(error as Error).message}); fix the path or unset it`,
        );
      }
      entries.push(...parseEntries(text, `AGENTQ_API_KEYS_FILE ${config.apiKeysFile}`));
    }
    const seen = new Set<string>();
    for (const entry of entries) {
      if (seen.has(entry.keyId))
        throw new AgentqError(
          'INVALID_INPUT',
          `an API key is listed twice (key id ${entry.keyId}); give each tenant and role its own key`,
        );
      seen.add(entry.keyId);
    }
    return new ApiKeys(entries);
  }

  /** For tests and embedders: `[{ key, tenant, role }]`. */
  static of(keys: readonly { key: string; tenant: string; role: Role }[]): ApiKeys {
    return ApiKeys.fromConfig({
      apiKeys: keys.map(({ key, tenant, role }) => `${key}:${tenant}:${role}`).join(','),
      apiKeysFile: undefined,
    });
  }

  /** No keys configured: every caller is the default tenant with the admin role (loopback only). */
  get isOpen(): boolean {
    return this.entries.length === 0;
  }

  get size(): number {
    return this.entries.length;
  }

  /** The principal of `key`, or null when it is not one of ours. */
  authenticate(key: string): Principal | null {
    const hash = sha256(key);
    let found: Entry | null = null;
    for (const entry of this.entries) {
      // No early exit: the time taken does not depend on which entry matched.
      if (timingSafeEqual(entry.hash, hash)) found = entry;
    }
    return found && { tenant: found.tenant, role: found.role, keyId: found.keyId };
  }

  /** The principal of a key id (a dashboard session names its key), or null once the key is gone. */
  byKeyId(keyId: string): Principal | null {
    const entry = this.entries.find((candidate) => candidate.keyId === keyId);
    return entry ? { tenant: entry.tenant, role: entry.role, keyId: entry.keyId } : null;
  }
}

/** `<key>:<tenant>:<role>` entries, comma- or newline-separated; blank lines and `#` comments skipped. */
function parseEntries(text: string, source: string): Entry[] {
  const entries: Entry[] = [];
  const items = text
    .split(/[,\n]/)
    .map((item) => item.trim())
    .filter((item) => item !== '' && !item.startsWith('#'));
  items.forEach((item, index) => {
    const where = `${source}, entry ${index + 1}`;
    const parts = item.split(':');
    // The key may itself contain ':'; tenant and role are the last two fields.
    const role = parts.pop();
    const tenant = parts.pop();
    const key = parts.join(':');
    if (!key || tenant === undefined || role === undefined) {
      throw new AgentqError('INVALID_INPUT', `${where}: expected <key>:<tenant>:<role>`);
    }
    if (!ID_PATTERN.test(tenant))
      throw new AgentqError(
        'INVALID_INPUT',
        `${where}: tenant '${tenant}' must be 1-128 characters of letters, digits, '_', '.' or '-'`,
      );
    if (!(ROLES as readonly string[]).includes(role))
      throw new AgentqError('INVALID_INPUT', `${where}: role '${role}' must be producer or admin`);
    if (key.length < MIN_KEY_LENGTH) {
      throw new AgentqError(
        'INVALID_INPUT',
        `${where}: the key is shorter than ${MIN_KEY_LENGTH} characters; use a long random one (e.g. openssl rand -hex 24)`,
      );
    }
    const hash = sha256(key);
    entries.push({ hash, tenant, role: role as Role, keyId: hash.toString('hex').slice(0, 16) });
  });
  return entries;
}
