// http/linger-close.ts: the "lingering close" both transports use after answering 413 to a body they will
// not read. Closing a socket with unread request bytes makes the kernel send a reset, and a client still
// sending its body then often loses the 413 it was sent. Instead the write side is half-closed (FIN after
// the response) and whatever the client still sends is read and dropped, up to a bound in bytes and time,
// before the socket is closed. server-node.ts applies it to node:http sockets.
import type { Socket } from 'node:net';

/** How much a lingering socket drains at most before it is closed anyway. */
const LINGER_MAX_BYTES = 8 * 1024 * 1024;
/** How long a lingering socket waits at most for the client to finish or close. */
const LINGER_MAX_MS = 2_000;

export interface LingerBounds {
  maxBytes: number;
  maxMs: number;
}

/**
 * Half-closes `socket` once its pending writes are flushed, then drains and drops incoming bytes until
 * the client closes its side, `maxBytes` more arrived, or `maxMs` passed; then destroys it.
 */
export function lingerClose(socket: Socket, bounds: LingerBounds = { maxBytes: LINGER_MAX_BYTES, maxMs: LINGER_MAX_MS }): void {
  if (socket.destroyed) return;
  let drained = 0;
  const finish = (): void => {
    clearTimeout(timer);
    socket.off('data', onData);
    socket.destroy();
  };
  const onData = (chunk: Buffer): void => {
    drained += chunk.length;
    if (drained > bounds.maxBytes) finish();
  };
  const timer = setTimeout(finish, bounds.maxMs);
  timer.unref();
  socket.on('data', onData);
  socket.once('end', finish);
  socket.once('close', () => clearTimeout(timer));
  socket.end();
  socket.resume();
}
