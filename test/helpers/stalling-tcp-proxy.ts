import { connect, createServer, type Server, type Socket } from 'node:net';

export interface StallingTcpProxy {
  port: number;
  /**
   * From the next chunk the client sends that contains `marker` (a command name, e.g. `HGETALL`, in any case), forward nothing either
   * way for `ms`, then everything held, in order. To the client this is a server stalled mid-command
   * (as `DEBUG SLEEP` makes it): its commands time out, and the server runs them — and whatever the
   * client sent meanwhile — once the stall ends. `times` stalls, one at a time.
   */
  stallOn(marker: string, ms: number, times?: number): void;
  /** Stalls begun so far. */
  stalls(): number;
  close(): Promise<void>;
}

/** A loopback TCP proxy to `targetPort` that stalls on command, for Redis timeout tests. */
export async function startStallingTcpProxy(targetPort: number): Promise<StallingTcpProxy> {
  const sockets = new Set<Socket>();
  let trigger: { marker: string; ms: number; left: number } | undefined;
  let stalledUntil = 0;
  let stallCount = 0;
  const held: { to: Socket; chunk: Buffer }[] = [];
  let releaseTimer: NodeJS.Timeout | undefined;

  const release = () => {
    releaseTimer = undefined;
    // One queue for both directions, in arrival order: a TCP stream reordered is a corrupted one.
    while (held.length > 0) {
      const { to, chunk } = held.shift()!;
      if (!to.destroyed) to.write(chunk);
    }
  };
  const forward = (to: Socket, chunk: Buffer, fromClient: boolean) => {
    if (
      fromClient &&
      trigger &&
      trigger.left > 0 &&
      Date.now() >= stalledUntil &&
      chunk.toString('latin1').toLowerCase().includes(trigger.marker)
    ) {
      trigger.left -= 1;
      stallCount += 1;
      stalledUntil = Date.now() + trigger.ms;
      releaseTimer = setTimeout(release, trigger.ms);
    }
    if (releaseTimer || held.length > 0) held.push({ to, chunk });
    else to.write(chunk);
  };

  const server: Server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    client.on('data', (chunk: Buffer) => forward(upstream, chunk, true));
    upstream.on('data', (chunk: Buffer) => forward(client, chunk, false));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (typeof address !== 'object' || !address) throw new Error('proxy has no port');
  return {
    port: address.port,
    stallOn(marker, ms, times = 1) {
      trigger = { marker: marker.toLowerCase(), ms, left: times };
    },
    stalls: () => stallCount,
    close: () =>
      new Promise<void>((resolve) => {
        if (releaseTimer) clearTimeout(releaseTimer);
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
