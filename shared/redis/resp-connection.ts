import { connect, type Socket } from 'node:net';

/** A Redis reply (RESP2): simple and bulk strings, integers, nil and arrays of these. */
type RespReply = string | number | null | RespReply[];

/** An error reply (`-ERR …`, `-WRONGTYPE …`): its message is Redis's line, as ioredis's ReplyError's is. */
export class RespReplyError extends Error {
  override readonly name = 'ReplyError';
}

/** Where to connect: what a plain `redis://` URL says. */
export interface RespAddress {
  host: string;
  port: number;
  username?: string;
  password?: string;
  db?: number;
}

interface RespConnectOptions {
  /** Give up connecting (refused, Redis still loading its data) after this long. */
  readyTimeoutMs: number;
  /** A command unanswered this long fails with `Command timed out` (ioredis's words) and the connection closes. */
  commandTimeoutMs: number;
}

/**
 * `redis://[[user]:password@]host[:port][/db]` as ioredis reads it; undefined for anything else (TLS,
 * query options, sockets, a user without a password), which is left to ioredis.
 */
export function respAddressOf(url: string): RespAddress | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== 'redis:' || parsed.search !== '' || parsed.hash !== '') return undefined;
  if (parsed.username && !parsed.password) return undefined;
  const db = parsed.pathname.length > 1 ? parsed.pathname.slice(1) : '0';
  if (!/^\d{1,5}$/.test(db)) return undefined;
  return {
    host: parsed.hostname.replace(/^\[|\]$/g, '') || 'localhost',
    port: parsed.port ? Number(parsed.port) : 6379,
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(db !== '0' ? { db: Number(db) } : {}),
  };
}

interface Pending {
  resolve(reply: RespReply): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

/** What `open` retries: refused or reset connections, and a Redis still loading its dataset. */
class NotReadyError extends Error {}

/**
 * A bare Redis connection: RESP2 over one TCP socket, commands answered in order. It is for a one-shot
 * command's few reads (`agentq status`), where loading ioredis cost more CPU than all the rest of the
 * command (CLI cold start). No reconnection, no offline queue, no cluster, no TLS, no pub/sub:
 * for anything more, ioredis (shared/redis/connect-redis.ts).
 *
 * Ready means what ioredis's ready means: connected, AUTH and SELECT accepted, and Redis answering
 * (PING; `-LOADING` is waited out). Until `readyTimeoutMs` it retries, 50 ms longer each time, as
 * ioredis's reconnect does.
 */
export class RespConnection {
  private buffer: Buffer = Buffer.alloc(0);
  private readonly pending: Pending[] = [];
  private closedWith: Error | undefined;

  private constructor(
    private readonly socket: Socket,
    private readonly commandTimeoutMs: number,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('error', (error) => this.fail(error));
    socket.on('close', () => this.fail(new Error('Connection is closed.')));
  }

  /** Connects and waits until Redis is ready; rejects with the last reason once `readyTimeoutMs` has passed. */
  static async open(
    address: RespAddress,
    { readyTimeoutMs, commandTimeoutMs }: RespConnectOptions,
  ): Promise<RespConnection> {
    const deadline = Date.now() + readyTimeoutMs;
    for (let attempt = 1; ; attempt += 1) {
      let connection: RespConnection | undefined;
      try {
        connection = new RespConnection(await connectSocket(address, deadline - Date.now()), commandTimeoutMs);
        await connection.handshake(address);
        return connection;
      } catch (error) {
        connection?.close();
        if (!(error instanceof NotReadyError)) throw error;
        const wait = Math.min(attempt * 50, 2000);
        if (Date.now() + wait >= deadline)
          throw new Error(`Redis was not ready within ${readyTimeoutMs} ms (${error.message})`, { cause: error });
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }

  /** Sends one command; resolves with its reply, rejects with a `RespReplyError` for an error reply. */
  command(...args: (string | number)[]): Promise<RespReply> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    return new Promise<RespReply>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.fail(new Error('Command timed out'));
        this.socket.destroy();
      }, this.commandTimeoutMs);
      this.pending.push({ resolve, reject, timer });
      this.socket.write(encodeCommand(args.map(String)));
    });
  }

  /** Closes the connection; commands still unanswered fail. */
  close(): void {
    this.fail(new Error('Connection is closed.'));
    // Nothing is left to send or to wait for: Redis drops a client that goes away.
    this.socket.destroy();
  }

  private async handshake({ username, password, db }: RespAddress): Promise<void> {
    // Sent together, answered in order: one round trip.
    const auth =
      password === undefined
        ? undefined
        : username
          ? this.command('AUTH', username, password)
          : this.command('AUTH', password);
    const select = db === undefined ? undefined : this.command('SELECT', db);
    const ping = this.command('PING');
    const replies = await Promise.allSettled([auth, select, ping]);
    for (const [index, reply] of replies.entries()) {
      if (reply.status === 'fulfilled') continue;
      const error = reply.reason as Error;
      // ioredis goes on (with a warning) when a password is given to a Redis that needs none.
      if (index === 0 && /no password is set|without any password configured/.test(error.message)) continue;
      if (error instanceof RespReplyError && !error.message.startsWith('LOADING')) throw error;
      throw new NotReadyError(error.message);
    }
  }

  private receive(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    let offset = 0;
    for (;;) {
      let parsed: ReturnType<typeof parseReply>;
      try {
        parsed = parseReply(this.buffer, offset);
      } catch (error) {
        this.fail(error as Error);
        this.socket.destroy();
        return;
      }
      if (!parsed) break;
      offset = parsed.next;
      const waiting = this.pending.shift();
      if (!waiting) continue;
      clearTimeout(waiting.timer);
      if (parsed.reply instanceof RespReplyError) waiting.reject(parsed.reply);
      else waiting.resolve(parsed.reply);
    }
    this.buffer = offset === this.buffer.length ? Buffer.alloc(0) : this.buffer.subarray(offset);
  }

  private fail(error: Error): void {
    this.closedWith ??= error;
    for (const waiting of this.pending.splice(0)) {
      clearTimeout(waiting.timer);
      waiting.reject(error);
    }
  }
}

function connectSocket({ host, port }: RespAddress, timeoutMs: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    const timer = setTimeout(
      () => {
        socket.destroy();
        reject(new NotReadyError(`connect ETIMEDOUT ${host}:${port}`));
      },
      Math.max(timeoutMs, 1),
    );
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.removeAllListeners('error');
      resolve(socket);
    });
    socket.once('error', (error) => {
      clearTimeout(timer);
      reject(new NotReadyError(error.message));
    });
  });
}

function encodeCommand(args: string[]): string {
  let text = `*${args.length}\r\n`;
  for (const arg of args) text += `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`;
  return text;
}

/** One reply from `buffer` at `offset`, or undefined while it has not all arrived. */
function parseReply(buffer: Buffer, offset: number): { reply: RespReply | RespReplyError; next: number } | undefined {
  const end = buffer.indexOf('\r\n', offset);
  if (end < 0) return undefined;
  const type = buffer[offset];
  const line = buffer.toString('utf8', offset + 1, end);
  switch (type) {
    case 0x2b: // +
      return { reply: line, next: end + 2 };
    case 0x2d: // -
      return { reply: new RespReplyError(line), next: end + 2 };
    case 0x3a: // :
      return { reply: Number(line), next: end + 2 };
    case 0x24: {
      // $
      const length = Number(line);
      if (length < 0) return { reply: null, next: end + 2 };
      const start = end + 2;
      if (buffer.length < start + length + 2) return undefined;
      return { reply: buffer.toString('utf8', start, start + length), next: start + length + 2 };
    }
    case 0x2a: {
      // *
      const count = Number(line);
      if (count < 0) return { reply: null, next: end + 2 };
      const items: RespReply[] = [];
      let next = end + 2;
      for (let index = 0; index < count; index += 1) {
        const item = parseReply(buffer, next);
        if (!item) return undefined;
        // An error inside an array (a transaction's) is not something these reads send.
        items.push(item.reply instanceof RespReplyError ? null : item.reply);
        next = item.next;
      }
      return { reply: items, next };
    }
    default:
      throw new Error(`unexpected reply type ${JSON.stringify(String.fromCharCode(type ?? 0))} from Redis`);
  }
}
