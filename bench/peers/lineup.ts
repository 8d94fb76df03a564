/**
 * Who runs in the peers bench and in what order: this checkout's agentq, the builds of other checkouts
 * given with `--agentq-root` (each named `agentq@<short commit>`), and the peers. The builds of agentq
 * take turns at the front of each round, so none always runs first (a warmer or cooler machine), and
 * the peers follow in their fixed order.
 */
import { execFileSync } from 'node:child_process';
import { basename } from 'node:path';
import type { SystemName } from './systems.js';

/** One entry of a round: a system's name in the figures, what it is, and (agentq) the checkout it runs. */
export interface Entrant {
  name: string;
  system: SystemName;
  root?: string;
}

/** `agentq@<short commit>` of `root`, or `agentq@<folder>` when it is not a git checkout; unique among `taken`. */
export function agentqBuildName(root: string, taken: readonly string[]): string {
  let label = basename(root);
  try {
    label = execFileSync('git', ['-C', root, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    // Not a git checkout: its folder's name says which it is.
  }
  const name = `agentq@${label}`;
  return taken.includes(name) ? `agentq@${label}(${basename(root)})` : name;
}

/** The order of round `index` (0-based): the agentq builds rotated by the round, then the peers. */
export function roundOrder(index: number, agentqs: readonly Entrant[], peers: readonly Entrant[]): Entrant[] {
  const shift = agentqs.length > 0 ? index % agentqs.length : 0;
  return [...agentqs.slice(shift), ...agentqs.slice(0, shift), ...peers];
}
