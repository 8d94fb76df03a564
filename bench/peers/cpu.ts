/**
 * CPU over every process a system needs: the given processes and all their descendants (PostgreSQL's
 * backends, say), read from /proc. Each process counts its own time and its reaped children's
 * (cutime, cstime), so a backend that exited during a measurement is still counted by its parent.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Linux's USER_HZ: /proc reports CPU in ticks of 1/100 s on every mainstream kernel. */
const TICKS_PER_S = 100;

interface Stat {
  ppid: number;
  ticks: number;
}

function readStat(pid: number): Stat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces: fields are counted after its closing parenthesis.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const [utime, stime, cutime, cstime] = fields.slice(11, 15).map(Number);
    return { ppid: Number(fields[1]), ticks: utime! + stime! + cutime! + cstime! };
  } catch {
    return undefined; // gone between the listing and the read
  }
}

/** µs of CPU the processes `roots` and their descendants have used so far. */
export function processTreeCpuUs(roots: readonly number[]): number {
  const stats = new Map<number, Stat>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat) stats.set(Number(entry), stat);
  }
  const inTree = new Set(roots);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, stat] of stats)
      if (!inTree.has(pid) && inTree.has(stat.ppid)) {
        inTree.add(pid);
        grew = true;
      }
  }
  let ticks = 0;
  for (const pid of inTree) ticks += stats.get(pid)?.ticks ?? 0;
  return (ticks / TICKS_PER_S) * 1e6;
}
