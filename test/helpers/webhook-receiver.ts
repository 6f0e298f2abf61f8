// test/helpers/webhook-receiver.ts: a loopback webhook receiver for the webhook tests. It verifies every
// request's Standard Webhooks signature with the `standardwebhooks` package, answers as `decide` says
// (200, 500, or hang until the sender gives up), records what arrived, and can stop and restart on the
// same port.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { call } from './app.ts';
import { poll, WAIT_MS, within } from './wait.ts';

export type Answer = 200 | 500 | 'hang';

export interface Received {
  id: string;
  timestamp: string;
  verified: boolean;
  body: { type: string; timestamp: string; data: { session_id: string; seq: number; payload: Record<string, unknown> } };
  answer: Answer;
}

export interface Receiver {
  url: string;
  readonly received: Received[];
  /** Ids answered 2xx, in arrival order. */
  readonly acked: string[];
  /** Resolves once `pred` holds over the received list (checked on each arrival). */
  /** Resolves once `pred` holds over what arrived; rejects naming `what` after `timeoutMs`. */
  until(pred: (r: Received[]) => boolean, what?: string, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
  restart(): Promise<void>;
  decide: (r: Omit<Received, 'answer'>, index: number) => Answer;
}

/** A fresh Standard Webhooks secret (whsec_ + base64 of 32 bytes). */
export function newSecret(): string {
  return `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64')}`;
}

export async function startReceiver(secret: string, decide: Receiver['decide'] = () => 200): Promise<Receiver> {
  const wh = new Webhook(secret);
  const received: Received[] = [];
  const acked: string[] = [];
  const waiters: Array<{ pred: (r: Received[]) => boolean; resolve(): void }> = [];
  const hanging = new Set<ServerResponse>();
  let server: Server;
  let port = 0;
  const check = () => {
    for (const w of [...waiters])
      if (w.pred(received)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
  };
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const headers = {
        'webhook-id': String(req.headers['webhook-id']),
        'webhook-timestamp': String(req.headers['webhook-timestamp']),
        'webhook-signature': String(req.headers['webhook-signature']),
      };
      let verified = true;
      try {
        wh.verify(raw, headers);
      } catch {
        verified = false;
      }
      const base = {
        id: headers['webhook-id'],
        timestamp: headers['webhook-timestamp'],
        verified,
        body: JSON.parse(raw) as Received['body'],
      };
      const answer = self.decide(base, received.length);
      received.push({ ...base, answer });
      if (answer === 'hang') hanging.add(res);
      else {
        if (answer === 200) acked.push(base.id);
        res.writeHead(answer, { 'content-type': 'text/plain' }).end(answer === 200 ? 'ok' : 'fail');
      }
      check();
    });
  };
  const listen = () =>
    new Promise<void>((resolve) => {
      server = createServer(handle);
      server.listen(port, '127.0.0.1', () => {
        port = (server.address() as AddressInfo).port;
        resolve();
      });
    });
  await listen();
  const self: Receiver = {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    acked,
    decide,
    until: (pred, what = 'the receiver to see the expected deliveries', timeoutMs = WAIT_MS) =>
      within(
        `${what} (${received.length} received so far)`,
        new Promise<void>((resolve) => {
          waiters.push({ pred, resolve });
          check();
        }),
        timeoutMs,
      ),
    stop: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        hanging.clear();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
    restart: listen,
  };
  return self;
}

/** Waits until the subscription's outbox has no pending entry (the status write follows the 2xx). */
export async function settled(base: string, id: string, expected: number): Promise<Array<Record<string, unknown>>> {
  let list: Array<Record<string, unknown>> = [];
  return poll(
    `the outbox of ${id} to settle with ${expected} deliveries`,
    async () => {
      const res = await call(base, 'GET', `/webhooks/${id}/deliveries?limit=1000`);
      list = res.body.deliveries as Array<Record<string, unknown>>;
      return list.length >= expected && list.every((d) => d.status !== 'pending') && list;
    },
    { detail: () => JSON.stringify(list.slice(0, 5)) },
  );
}
