import { connect, createServer, type Server, type Socket } from 'node:net';

export interface SlowTcpProxyOptions {
  targetPort: number;
  /** Added to every chunk, each way. */
  latencyMs: number;
  /** Each way, per connection. @default unlimited */
  bytesPerSecond?: number;
  /** Per connection: after this many bytes towards the target, forward nothing more (a stuck server). */
  blackholeAfterBytes?: number;
}

/**
 * A loopback TCP proxy that makes a server slow the way a busy machine or a far network does: every
 * chunk arrives `latencyMs` late, at most `bytesPerSecond`, in order. Tests point a client at `url`.
 */
export async function startSlowTcpProxy({
  targetPort,
  latencyMs,
  bytesPerSecond,
  blackholeAfterBytes,
}: SlowTcpProxyOptions): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const pipeSlowly = (from: Socket, to: Socket, limitBytes?: number) => {
    // One FIFO per direction, drained by one timer at a time: separate timers due in the same
    // millisecond may fire out of order, and a reordered TCP stream is a corrupted one.
    const queue: { at: number; chunk: Buffer }[] = [];
    let releaseAt = 0;
    let passed = 0;
    let timer: NodeJS.Timeout | undefined;
    let ended = false;
    const drain = () => {
      timer = undefined;
      while (queue.length > 0 && queue[0]!.at <= Date.now()) if (!to.destroyed) to.write(queue.shift()!.chunk);
      if (queue.length > 0) timer = setTimeout(drain, queue[0]!.at - Date.now());
      else if (ended) to.destroy();
    };
    from.on('data', (chunk: Buffer) => {
      if (limitBytes !== undefined && passed >= limitBytes) return;
      passed += chunk.length;
      const transfer = bytesPerSecond ? (chunk.length / bytesPerSecond) * 1000 : 0;
      releaseAt = Math.max(Date.now() + latencyMs, releaseAt) + transfer;
      queue.push({ at: releaseAt, chunk });
      timer ??= setTimeout(drain, Math.max(0, queue[0]!.at - Date.now()));
    });
    from.on('close', () => {
      ended = true;
      timer ??= setTimeout(drain, 0);
    });
    from.on('error', () => to.destroy());
  };
  const server: Server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    pipeSlowly(client, upstream, blackholeAfterBytes);
    pipeSlowly(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (typeof address !== 'object' || !address) throw new Error('proxy has no port');
  return {
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
