// test/integration/comms-tcp.test.ts: two real Warren processes (`warren serve`) on loopback, each with
// a TCP comms listener, trusting each other through [comms] trusted_peers (set live with PATCH /config).
// They list each other's agents as `tcp` peers and exchange a peer request and its response, plus a
// checksum_token answered by the remote runtime; untrusted and unreachable peers fail with their codes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { call } from '../helpers/app.ts';
import { send, userTexts, waitRuns } from '../helpers/comms.ts';
import { startServerProcess, writeRealmConfig, type ServerProcess } from '../helpers/server-process.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';

/** The advertise address the process logged when its comms listener came up (before 'listening'). */
function commsAddress(p: ServerProcess): string {
  const line = p.logs.find((l) => l.msg === 'comms listening');
  assert.ok(line && typeof line.advertise === 'string', 'comms listening logged');
  return line.advertise as string;
}

async function agent(base: string, name: string): Promise<string> {
  const res = await call(base, 'POST', '/sessions', {
    prompt: `you are ${name}`,
    provider: 'scripted',
    keep_alive: true,
    comms_name: name,
    peer_meta: { description: `${name} over tcp` },
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.session_id;
}

describe('comms between two Warren processes over TCP', () => {
  it('lists remote agents, exchanges a request and its response, and answers checksum_token', async (t) => {
    const dir = await tmpDir('warren-comms-tcp-');
    t.after(() => dir.cleanup());
    const cfg = { comms: { listen: '127.0.0.1:0' }, providers: { scripted: { mode: 'echo' } } };
    await writeRealmConfig(dir.path, 'east', cfg);
    await writeRealmConfig(dir.path, 'west', cfg);
    const [east, west] = await Promise.all([
      startServerProcess({ stateRoot: dir.path, realm: 'east', t }),
      startServerProcess({ stateRoot: dir.path, realm: 'west', t }),
    ]);
    const E = commsAddress(east);
    const W = commsAddress(west);
    assert.equal((await call(east.url, 'PATCH', '/config', { comms: { trusted_peers: [{ name: 'west', address: W }] } })).status, 200);
    assert.equal((await call(west.url, 'PATCH', '/config', { comms: { trusted_peers: [{ name: 'east', address: E }] } })).status, 200);
    const a = await agent(east.url, 'alpha');
    const b = await agent(west.url, 'beta');

    const peers = await call(east.url, 'GET', `/comms/peers?session_id=${a}`);
    assert.equal(peers.status, 200);
    assert.deepEqual(peers.body.peers, [
      {
        peer_id: `${b}@${W}`,
        name: 'beta',
        address: { transport: 'tcp', endpoint: `tcp://${W}` },
        source: 'trusted',
        sendable_kinds: ['peer_message', 'peer_lifecycle', 'peer_request', 'peer_response'],
        capabilities: { version: 1, extensions: {} },
        meta: { description: 'beta over tcp' },
      },
    ]);

    const req = await send(east.url, {
      kind: 'peer_request',
      session_id: a,
      to: `${b}@${W}`,
      intent: 'supervisor.bridge',
      params: { command: 'ping' },
    });
    assert.equal(req.status, 200, JSON.stringify(req.body));
    assert.deepEqual(req.body.delivery, { durably_resolved: { outcome: 'accepted' } });
    const rid: string = req.body.request_id;
    await waitRuns(west.url, b, 2);
    assert.match(
      (await userTexts(west.url, b)).at(-1)!,
      new RegExp(`^\\[request ${rid} from alpha \\(${a}@${E.replace(/\./g, '\\.')}\\): supervisor.bridge\\]`),
    );

    const res = await send(west.url, {
      kind: 'peer_response',
      session_id: b,
      to: `${a}@${E}`,
      in_reply_to: rid,
      status: 'completed',
      result: { command: 'ping', ok: true, output: 'pong' },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.delivery, { durably_resolved: { outcome: 'accepted' } });
    await waitRuns(east.url, a, 2);
    assert.equal(
      (await userTexts(east.url, a)).at(-1),
      `[response from beta (${b}@${W}) to request ${rid}: completed] {"command":"ping","ok":true,"output":"pong"}`,
    );

    const sum = await send(east.url, {
      kind: 'peer_request',
      session_id: a,
      to: `${b}@${W}`,
      intent: 'checksum_token',
      params: { subject: 'over tcp' },
    });
    assert.equal(sum.status, 200);
    await waitRuns(east.url, a, 3);
    const token = createHash('sha256').update('over tcp').digest('hex');
    assert.match((await userTexts(east.url, a)).at(-1)!, new RegExp(`"token":"${token}"`));

    const untrusted = await send(east.url, { kind: 'peer_message', session_id: a, to: `${b}@127.0.0.1:9`, body: 'x' });
    assert.equal(untrusted.status, 500);
    assert.equal(untrusted.body.code, 'peer_not_found_or_not_trusted');
    // A trusted address where nothing listens: unreachable.
    await call(east.url, 'PATCH', '/config', {
      comms: {
        trusted_peers: [
          { name: 'west', address: W },
          { name: 'gone', address: '127.0.0.1:9' },
        ],
      },
    });
    const gone = await send(east.url, { kind: 'peer_message', session_id: a, to: `${b}@127.0.0.1:9`, body: 'x' });
    assert.equal(gone.status, 500);
    assert.equal(gone.body.code, 'peer_unreachable');
    // A process that does not trust the sender refuses its frames.
    await call(west.url, 'PATCH', '/config', { comms: { trusted_peers: [] } });
    const refused = await send(east.url, { kind: 'peer_message', session_id: a, to: `${b}@${W}`, body: 'x' });
    assert.equal(refused.status, 500);
    assert.equal(refused.body.code, 'peer_not_found_or_not_trusted');
  });
});
