import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/**
 * TCP connections this process holds to `port` (Linux: its socket inodes in /proc/self/fd, matched
 * against the kernel's TCP tables). Counts what the process really opened, whichever library opened it,
 * and nothing of other processes sharing the same redis-server.
 */
export function tcpConnectionsTo(port: number): number {
  const inodes = new Set<string>();
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const link = readlinkSync(`/proc/self/fd/${fd}`);
      const match = /^socket:\[(\d+)\]$/.exec(link);
      if (match) inodes.add(match[1]!);
    } catch {
      // closed while listing
    }
  }
  const portHex = port.toString(16).toUpperCase().padStart(4, '0');
  let count = 0;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address rem_address st … inode (10th field); 01 = ESTABLISHED
      if (fields.length < 10 || fields[3] !== '01') continue;
      if (fields[2]!.endsWith(`:${portHex}`) && inodes.has(fields[9]!)) count += 1;
    }
  }
  return count;
}
