import { connect, createServer, type Server, type Socket } from 'node:net';

export interface SilencingTcpProxy {
  port: number;
  /**
   * From now on forward nothing either way on every connection but the spared ones, and close none:
   * to a client this is a grey network fault (its socket open, its commands unanswered). What arrives
   * meanwhile is held, in order, as a network holds what it retransmits.
   */
  silence(): void;
  /** Forward again: what was held first, in order, then as before. */
  resume(): void;
  /** Connections spared so far (those whose first bytes named the marker). */
  spared(): number;
  close(): Promise<void>;
}

/** How much of a connection's first bytes is looked at for the marker. */
const LOOK_BYTES = 1024;

/**
 * A loopback TCP proxy to `targetPort` that silences connections on demand, except those whose client
 * named `spareMarker` in its first bytes (ioredis sends CLIENT SETNAME first when given a
 * `connectionName`): a worker's liveness connection keeps beating while its data connections go silent.
 */
export async function startSilencingTcpProxy(targetPort: number, spareMarker: string): Promise<SilencingTcpProxy> {
  const sockets = new Set<Socket>();
  let silent = false;
  let sparedCount = 0;
  const links = new Set<{ flush(): void }>();

  const server: Server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    let seen = '';
    let spared: boolean | undefined;
    // One queue for both directions, in arrival order.
    const held: { to: Socket; chunk: Buffer }[] = [];
    const link = {
      flush() {
        while (held.length > 0) {
          const { to, chunk } = held.shift()!;
          if (!to.destroyed) to.write(chunk);
        }
      },
    };
    links.add(link);
    const forward = (to: Socket, chunk: Buffer) => {
      if (spared !== true && (silent || held.length > 0)) held.push({ to, chunk });
      else to.write(chunk);
    };
    client.on('data', (chunk: Buffer) => {
      if (spared === undefined) {
        seen += chunk.toString('latin1');
        if (seen.includes(spareMarker)) {
          spared = true;
          sparedCount += 1;
          link.flush();
        } else if (seen.length >= LOOK_BYTES) spared = false;
      }
      forward(upstream, chunk);
    });
    upstream.on('data', (chunk: Buffer) => forward(client, chunk));
    const end = () => {
      links.delete(link);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end);
    upstream.on('close', end);
    client.on('error', end);
    upstream.on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (typeof address !== 'object' || !address) throw new Error('proxy has no port');
  return {
    port: address.port,
    silence() {
      silent = true;
    },
    resume() {
      silent = false;
      for (const link of links) link.flush();
    },
    spared: () => sparedCount,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
