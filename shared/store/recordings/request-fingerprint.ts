import { hash } from 'node:crypto';
import { BoundedMemo } from '../../contracts/bounded-memo.js';

/** Fields of a model request that are callbacks or plumbing, not what was asked. */
const NOT_ASKED = new Set(['abortSignal', 'onTextDelta', 'onToolCallDelta']);

/** A request as the recording keeps it: messages and tool lists by content address (`c:<hash>`). */
interface FingerprintedRequest {
  /** sha256 of the request's canonical JSON (with its contents by address): equal requests, equal prints. */
  fingerprint: string;
  /** The request with each message, and the tool list, replaced by its content address. */
  compact: Record<string, unknown>;
  /** The contents those addresses name, as JSON: stored once per run however many calls repeat them. */
  contents: Map<string, string>;
}

/** JSON with object keys sorted at every level, so equal values print equally. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  // As JSON.stringify sees it (a Date as its ISO string): equal to the sorted copy of the value's JSON.
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function')
    return sortKeys((value as { toJSON(): unknown }).toJSON());
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) sorted[key] = sortKeys((value as Record<string, unknown>)[key]);
  return sorted;
}

/** What was asked, as plain JSON: callbacks, signals and undefined fields left out. */
export function askedOf(request: unknown): Record<string, unknown> {
  return JSON.parse(JSON.stringify(askedFields(request))) as Record<string, unknown>;
}

/** askedOf's fields as they are (not copied): what a fingerprint reads, and JSON.stringify writes the same. */
function askedFields(request: unknown): Record<string, unknown> {
  if (request === null || typeof request !== 'object') return { value: request ?? null };
  const asked: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(request)) {
    if (NOT_ASKED.has(key) || value === undefined || typeof value === 'function') continue;
    asked[key] = value;
  }
  return asked;
}

/**
 * A content's address within one run's recording: 64 bits of its sha256. Short on purpose — every call
 * names every message of its prompt, so a long run keeps many addresses — and ample for the contents
 * of one run (a collision among 10,000 contents has odds of about 3 in 10^12).
 */
function address(json: string): string {
  return addresses.getOrSet(json, contentAddress);
}

/** At module level, so a lookup makes no closure (address runs per content of every recorded call). */
function contentAddress(json: string): string {
  // One-shot hash: the same digest as createHash's without a Hash object per content (half the time or less).
  return `c:${hash('sha256', json).slice(0, 16)}`;
}

/**
 * Addresses of contents this process printed lately: the system prompt and tool list every call of a graph
 * sends are hashed once, not once per call. Cleared when full (a cache, never a record).
 */
const addresses = new BoundedMemo<string, string>({ limit: 2000 });

/**
 * The fingerprint and compact form of a paid call's request (a model request, a tool call's name and
 * arguments). A growing history costs one content entry per new message, not a copy per call: each
 * message is kept once under its address, and a call names the addresses in order.
 */
export function fingerprintRequest(request: unknown): FingerprintedRequest {
  // Not copied through JSON first (askedOf): canonicalJson reads values as JSON.stringify would, and the
  // compact form is written with JSON.stringify, so both are what they were of the copy.
  const compact = askedFields(request);
  const contents = new Map<string, string>();
  const keep = (value: unknown): string => {
    const json = canonicalJson(value);
    const ref = address(json);
    contents.set(ref, json);
    return ref;
  };
  if (Array.isArray(compact.messages)) compact.messages = compact.messages.map(keep);
  if (Array.isArray(compact.tools)) compact.tools = keep(compact.tools);
  // 128 bits: enough to tell two requests apart, half the bytes of the whole digest in every recorded call.
  const fingerprint = hash('sha256', canonicalJson(compact)).slice(0, 32);
  return { fingerprint, compact, contents };
}

/** The addresses a compact request names (to read their contents). */
export function addressesOf(compact: Record<string, unknown>): string[] {
  const refs: string[] = [];
  if (Array.isArray(compact.messages))
    for (const ref of compact.messages) if (typeof ref === 'string' && ref.startsWith('c:')) refs.push(ref);
  if (typeof compact.tools === 'string' && compact.tools.startsWith('c:')) refs.push(compact.tools);
  return refs;
}

/** A compact request with its addresses replaced by the contents in `contents` (missing ones stay addresses). */
export function expandRequest(
  compact: Record<string, unknown>,
  contents: ReadonlyMap<string, string>,
): Record<string, unknown> {
  const read = (ref: unknown): unknown => {
    if (typeof ref !== 'string') return ref;
    const json = contents.get(ref);
    return json === undefined ? ref : JSON.parse(json);
  };
  const full = { ...compact };
  if (Array.isArray(full.messages)) full.messages = full.messages.map(read);
  if (typeof full.tools === 'string') full.tools = read(full.tools);
  return full;
}
