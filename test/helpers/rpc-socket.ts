// test/helpers/rpc-socket.ts: a JSON-RPC client over Warren's /rpc WebSocket for tests. Replies are handed
// out in arrival order (next()); send() takes a value (sent as JSON) or a raw string (malformed frames).
import WebSocket from 'ws';

export interface RpcSocket {
  ws: WebSocket;
  send(v: unknown): void;
  next(): Promise<any>;
}

export async function connectRpcSocket(url: string, headers: Record<string, string> = {}): Promise<RpcSocket> {
  const ws = new WebSocket(url.replace(/^http/, 'ws') + '/rpc', { headers });
  const replies: unknown[] = [];
  const waiters: Array<(v: unknown) => void> = [];
  ws.on('message', (data) => {
    const v = JSON.parse(String(data));
    const w = waiters.shift();
    if (w) w(v);
    else replies.push(v);
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return {
    ws,
    send(v: unknown) {
      ws.send(typeof v === 'string' ? v : JSON.stringify(v));
    },
    next() {
      return replies.length ? Promise.resolve(replies.shift()) : new Promise((resolve) => waiters.push(resolve));
    },
  };
}
