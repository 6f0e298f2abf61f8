// bench/scenarios/comms.ts: comms costs. (a) Round trip of a peer request and its response between two
// comms sessions, in one process (inproc) and between two Warren processes over the TCP comms listener:
// two POST /comms/send calls, each answered once the recipient's inbox commit is durable. (b) Inbox
// admission throughput: POST /sessions/{id}/external-events in a closed loop (each a durable commit).
// The recipients are not keep-alive, so no model turn runs during the window.
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Pool } from 'undici';
import { closedLoop, measured } from '../load.ts';
import { withTempRoot, type BenchContext, type Row, type Scenario, type ScenarioResult } from '../scenario.ts';
import { benchConfigToml, startServer, type ServerHandle } from '../server-process.ts';
import { round } from '../stats.ts';

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as { port: number };
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

async function writeRealm(
  root: string,
  realm: string,
  llmUrl: string,
  listen: number,
  trusted: Array<{ name: string; port: number }>,
): Promise<void> {
  const dir = join(root, realm);
  await mkdir(dir, { recursive: true });
  const peers = trusted.map((p) => `{ name = "${p.name}", address = "127.0.0.1:${p.port}" }`).join(', ');
  await writeFile(
    join(dir, 'config.toml'),
    `${benchConfigToml(llmUrl)}\n[comms]\ninbox_capacity = 100000000\nlisten = "127.0.0.1:${listen}"\ntrusted_peers = [${peers}]\n`,
  );
}

async function post(pool: Pool, path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await pool.request({ method: 'POST', path, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${path} ${res.statusCode}: ${text.slice(0, 200)}`);
  return JSON.parse(text) as Record<string, unknown>;
}

async function agent(pool: Pool, name: string): Promise<string> {
  return (
    await post(pool, '/sessions', { prompt: 'bench', provider: 'self_hosted', model: 'bench-model', comms_name: name, max_tokens: 16 })
  ).session_id as string;
}

/** One round trip: a request a→b, then b's completed response back to a. */
function roundTrip(ap: Pool, bp: Pool, a: string, aPeer: string, b: string, bPeer: string) {
  return async () => {
    const req = await post(ap, '/comms/send', {
      kind: 'peer_request',
      session_id: a,
      to: bPeer,
      intent: 'supervisor.bridge',
      params: { command: 'ping' },
    });
    await post(bp, '/comms/send', {
      kind: 'peer_response',
      session_id: b,
      to: aPeer,
      in_reply_to: req.request_id,
      status: 'completed',
      result: { command: 'ping', ok: true },
    });
  };
}

function row(label: string, c: number, m: Awaited<ReturnType<typeof measured>>): Row {
  return {
    what: label,
    c,
    'ops/s': round(m.opsPerSec),
    'p50 ms': round(m.latency.p50),
    'p99 ms': round(m.latency.p99),
    'server CPU ms/op': round(m.cpuMsPerOp),
    'LMDB commits/op': m.commitsPerOp === null ? null : round(m.commitsPerOp),
    errors: m.errors,
  };
}

export const commsScenario: Scenario = {
  id: 'comms',
  title: 'Comms: peer request+response round trip (inproc, TCP) and inbox admission throughput',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const rows: Row[] = [];
    const window = ctx.quick ? Math.min(ctx.durationMs, 2_000) : ctx.durationMs;
    await withTempRoot(ctx, async (root) => {
      const [pe, pw] = [await freePort(), await freePort()];
      await writeRealm(root, 'east', ctx.fake.url, pe, [{ name: 'west', port: pw }]);
      await writeRealm(root, 'west', ctx.fake.url, pw, [{ name: 'east', port: pe }]);
      const servers: ServerHandle[] = [];
      try {
        const east = await startServer({ stateRoot: root, realm: 'east', llmUrl: ctx.fake.url, pin: ctx.pin, nodeFlags: ctx.nodeFlags });
        servers.push(east);
        const west = await startServer({ stateRoot: root, realm: 'west', llmUrl: ctx.fake.url, pin: ctx.pin, nodeFlags: ctx.nodeFlags });
        servers.push(west);
        const ep = new Pool(east.url, { connections: 16 });
        const wp = new Pool(west.url, { connections: 16 });
        try {
          const a = await agent(ep, 'alpha');
          const b = await agent(ep, 'beta');
          const w = await agent(wp, 'omega');
          for (const c of [1, 8]) {
            const m = await measured(east, () => closedLoop(c, window, roundTrip(ep, ep, a, a, b, b)));
            ctx.log(`  inproc round trip c=${c}: p50 ${round(m.latency.p50)} ms`);
            rows.push(row('round trip, inproc', c, m));
          }
          for (const c of [1, 8]) {
            const m = await measured(east, () =>
              closedLoop(c, window, roundTrip(ep, wp, a, `${a}@127.0.0.1:${pe}`, w, `${w}@127.0.0.1:${pw}`)),
            );
            ctx.log(`  tcp round trip c=${c}: p50 ${round(m.latency.p50)} ms`);
            rows.push(row('round trip, TCP (east CPU)', c, m));
          }
          for (const c of [1, 16]) {
            const m = await measured(east, () =>
              closedLoop(c, window, async (wk, i) => {
                await post(ep, `/sessions/${b}/external-events`, { kind: 'generic_json', event_type: 'bench', payload: { wk, i } });
              }),
            );
            ctx.log(`  external-event admission c=${c}: ${round(m.opsPerSec)}/s`);
            rows.push(row('inbox admission (external-events)', c, m));
          }
        } finally {
          await ep.close();
          await wp.close();
        }
      } finally {
        for (const s of servers) await s.stop();
      }
    });
    return {
      id: 'comms',
      title: this.title,
      columns: ['what', 'c', 'ops/s', 'p50 ms', 'p99 ms', 'server CPU ms/op', 'LMDB commits/op', 'errors'],
      rows,
      notes: [
        'A round trip is two POST /comms/send calls (request, then its response); each answers once the recipient inbox commit is durable (LMDB).',
      ],
      targets: [],
    };
  },
};
