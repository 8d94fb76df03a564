import { createHash } from 'node:crypto';

/** The UUID namespace of agentq's Qdrant point ids (a fixed random UUID; changing it re-keys every point). */
const AGENTQ_POINT_NAMESPACE = '6f1b2a4e-3c9d-4b7a-9e52-8d0c41f7a3b6';

/** RFC 4122 version-5 (name-based, SHA-1) UUID of `name` in `namespace`. */
export function uuidV5(namespace: string, name: string): string {
  const hash = createHash('sha1')
    .update(Buffer.from(namespace.replaceAll('-', ''), 'hex'))
    .update(name, 'utf8')
    .digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50; // version 5
  hash[8] = (hash[8]! & 0x3f) | 0x80; // RFC 4122 variant
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/**
 * Qdrant takes only unsigned integers or UUIDs as point ids, and agentq's ids are strings unique per
 * (tenant, collection). The point id is the version-5 UUID of those parts joined by NUL under
 * {@link AGENTQ_POINT_NAMESPACE}: deterministic (upserting the same record again replaces its point),
 * different for the same record id in two tenants or collections; the original id stays in the payload.
 * Tenants and collection names cannot contain NUL, so the joined name is unambiguous.
 */
export function qdrantPointId(parts: readonly string[]): string {
  return uuidV5(AGENTQ_POINT_NAMESPACE, parts.join('\u0000'));
}
