// actors/comms/tcp-transport.ts: comms between Warren processes over TCP (node:net). Frames are
// newline-delimited JSON: a request {id, op, from_address, ...} answered by one reply {id, ok, ...} on
// the same connection (replies may come out of order; `id` correlates). The listener serves `deliver`
// (admit a peer envelope) and `peers` (list this process's comms agents). The client keeps one
// connection per peer address and multiplexes calls over it. Used by actors/comms/comms-host.ts.
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import type { Logger } from 'pino';
import { Compile } from 'typebox/compile';
import { TcpReplyFrame, TcpRequestFrame } from '../../contracts/comms.ts';

const checkRequest = Compile(TcpRequestFrame);
const checkReply = Compile(TcpReplyFrame);

/** Longest frame accepted (bytes); a longer line closes the connection. */
const MAX_FRAME_BYTES = 8 * 1024 * 1024;

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
export type RequestBody = DistributiveOmit<TcpRequestFrame, 'id'>;
export type ReplyBody = DistributiveOmit<TcpReplyFrame, 'id'>;

/** A peer call that got no reply (refused, reset, timed out). */
export class PeerUnreachableError extends Error {
  constructor(
    readonly address: string,
    reason: string,
  ) {
    super(`peer ${address} unreachable: ${reason}`);
    this.name = 'PeerUnreachableError';
  }
}

/** Splits `host:port` (IPv6 hosts in brackets). */
function splitAddress(address: string): { host: string; port: number } {
  const colon = address.lastIndexOf(':');
  if (colon <= 0) throw new Error(`address must be host:port: ${address}`);
  const host = address.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
  const port = Number(address.slice(colon + 1));
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`bad port in address: ${address}`);
  return { host, port };
}

function joinAddress(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** Calls `onLine` for each complete line; false when the buffer outgrew the frame bound. */
function lineReader(onLine: (line: string) => void): (chunk: string) => boolean {
  let buffer = '';
  return (chunk) => {
    buffer += chunk;
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (line.trim()) onLine(line);
    }
    return buffer.length <= MAX_FRAME_BYTES;
  };
}

/** The TCP comms listener. */
export class CommsListener {
  private constructor(
    private readonly server: Server,
    readonly address: string,
    private readonly sockets: Set<Socket>,
  ) {}

  static async start(listen: string, handle: (frame: TcpRequestFrame) => Promise<ReplyBody>, log: Logger): Promise<CommsListener> {
    const { host, port } = splitAddress(listen);
    const sockets = new Set<Socket>();
    const server = createServer((socket) => {
      sockets.add(socket);
      socket.setEncoding('utf8');
      socket.setNoDelay(true);
      socket.on('error', (err) => log.debug({ err }, 'comms connection error'));
      socket.on('close', () => sockets.delete(socket));
      const read = lineReader((line) => {
        let frame: unknown;
        try {
          frame = JSON.parse(line);
        } catch {
          frame = undefined;
        }
        const id = typeof (frame as { id?: unknown } | undefined)?.id === 'number' ? (frame as { id: number }).id : 0;
        const reply = (body: ReplyBody) => {
          if (!socket.destroyed) socket.write(JSON.stringify({ ...body, id }) + '\n');
        };
        if (!checkRequest.Check(frame)) {
          reply({ ok: false, code: 'bad_frame', message: 'frame does not match the comms protocol' });
          return;
        }
        handle(frame).then(reply, (err: unknown) => {
          log.error({ err }, 'comms frame failed');
          reply({ ok: false, code: 'internal_error', message: 'internal error' });
        });
      });
      socket.on('data', (chunk: string) => {
        if (!read(chunk)) socket.destroy();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', (err) => log.error({ err }, 'comms listener error'));
    const bound = server.address();
    const address = bound && typeof bound === 'object' ? joinAddress(bound.address, bound.port) : listen;
    return new CommsListener(server, address, sockets);
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const s of this.sockets) s.destroy();
    await closed;
  }
}

interface Pending {
  resolve(reply: ReplyBody): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

interface Connection {
  socket: Socket;
  pending: Map<number, Pending>;
}

/** Calls peers over TCP: one multiplexed connection per address, re-made after a failure. */
export class PeerClient {
  private readonly conns = new Map<string, Connection>();
  private nextId = 1;
  private closed = false;

  constructor(private readonly opts: { timeoutMs(): number; log: Logger }) {}

  /** Sends one request and resolves with its reply; rejects with PeerUnreachableError. */
  call(address: string, body: RequestBody): Promise<ReplyBody> {
    if (this.closed) return Promise.reject(new PeerUnreachableError(address, 'client closed'));
    let conn: Connection;
    try {
      conn = this.conns.get(address) ?? this.connect(address);
    } catch (err) {
      return Promise.reject(new PeerUnreachableError(address, (err as Error).message));
    }
    const id = this.nextId++;
    return new Promise<ReplyBody>((resolve, reject) => {
      const timer = setTimeout(() => {
        conn.pending.delete(id);
        reject(new PeerUnreachableError(address, `no reply within ${this.opts.timeoutMs()} ms`));
      }, this.opts.timeoutMs());
      conn.pending.set(id, { resolve, reject, timer });
      conn.socket.write(JSON.stringify({ ...body, id }) + '\n');
    });
  }

  private connect(address: string): Connection {
    const { host, port } = splitAddress(address);
    const socket = createConnection({ host, port });
    socket.setEncoding('utf8');
    socket.setNoDelay(true);
    const conn: Connection = { socket, pending: new Map() };
    this.conns.set(address, conn);
    const fail = (reason: string) => {
      if (this.conns.get(address) === conn) this.conns.delete(address);
      for (const p of conn.pending.values()) {
        clearTimeout(p.timer);
        p.reject(new PeerUnreachableError(address, reason));
      }
      conn.pending.clear();
    };
    socket.on('error', (err) => fail(err.message));
    socket.on('close', () => fail('connection closed'));
    const read = lineReader((line) => {
      let frame: unknown;
      try {
        frame = JSON.parse(line);
      } catch {
        return;
      }
      if (!checkReply.Check(frame)) return;
      const p = conn.pending.get(frame.id);
      if (!p) return;
      conn.pending.delete(frame.id);
      clearTimeout(p.timer);
      const { id: _id, ...body } = frame;
      p.resolve(body as ReplyBody);
    });
    socket.on('data', (chunk: string) => {
      if (!read(chunk)) socket.destroy();
    });
    return conn;
  }

  close(): void {
    this.closed = true;
    for (const conn of this.conns.values()) conn.socket.destroy();
    this.conns.clear();
  }
}
