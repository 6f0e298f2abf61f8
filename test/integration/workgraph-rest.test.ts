// The read-only WorkGraph REST routes: query parameters (namespace, all_namespaces, statuses, labels,
// include_terminal, limit, after_seq paging), their error answers, absent mutation paths, and the graph
// surviving a restart on every backend.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { createApp } from '../../app.ts';
import { createScriptedProvider } from '../../providers/scripted.ts';
import { call, startApp } from '../helpers/app.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';
import { agentOk, workGraphDriver } from '../helpers/workgraph-driver.ts';
import { poll } from '../helpers/wait.ts';

describe('workgraph REST reads', () => {
  it('filters items by namespace, statuses, labels, include_terminal and limit', async (t) => {
    const a = await startApp(t, workGraphDriver);
    const s = (await agentOk(a.url, 'workgraph_list', {})).sessionId;
    const mk = async (title: string, extra: Record<string, unknown> = {}) =>
      (await agentOk(a.url, 'workgraph_create', { title, ...extra }, s)).result;
    const one = await mk('one', { labels: ['x', 'y'] });
    const two = await mk('two', { labels: ['x'] });
    const other = await mk('other', { namespace: 'team-b' });
    await agentOk(a.url, 'workgraph_close', { item_id: two.id, expected_revision: 1, status: 'completed' }, s);
    const ids = async (q: string) => (await call(a.url, 'GET', `/workgraph/items${q}`)).body.items.map((i: { id: string }) => i.id);
    assert.deepEqual(await ids(''), [one.id]);
    assert.deepEqual(await ids('?include_terminal=true'), [one.id, two.id]);
    assert.deepEqual(await ids('?statuses=completed'), [two.id]);
    assert.deepEqual(await ids('?statuses=open&statuses=completed'), [one.id, two.id]);
    assert.deepEqual(await ids('?statuses=open,completed&labels=x&labels=y'), [one.id]);
    assert.deepEqual(await ids('?include_terminal=true&limit=1'), [one.id]);
    assert.deepEqual(await ids('?namespace=team-b'), [other.id]);
    assert.deepEqual(new Set(await ids('?all_namespaces=true&include_terminal=true')), new Set([one.id, two.id, other.id]));
    assert.equal(other.namespace, 'team-b');
    const snap = (await call(a.url, 'GET', '/workgraph/snapshot?all_namespaces=true')).body;
    assert.equal(snap.all_namespaces, true);
    assert.equal(snap.namespace, undefined);
    assert.deepEqual(new Set(snap.ready_item_ids), new Set([one.id, other.id]));
    const item = (await call(a.url, 'GET', `/workgraph/items/${other.id}?namespace=team-b`)).body;
    assert.equal(item.title, 'other');
    assert.equal((await call(a.url, 'GET', `/workgraph/ready?labels=y&limit=5`)).body.items[0].id, one.id);
  });

  it('pages events with after_seq and limit', async (t) => {
    const a = await startApp(t, workGraphDriver);
    const s = (await agentOk(a.url, 'workgraph_list', {})).sessionId;
    for (let i = 0; i < 5; i++) await agentOk(a.url, 'workgraph_create', { title: `t${i}` }, s);
    const page1 = (await call(a.url, 'GET', '/workgraph/events?limit=2')).body;
    assert.deepEqual(
      page1.events.map((e: { seq: number }) => e.seq),
      [1, 2],
    );
    assert.equal(page1.has_more, true);
    assert.equal(page1.events[0].kind, 'created');
    assert.equal(page1.events[0].realm_id, 'test-realm');
    assert.equal(page1.events[0].namespace, 'default');
    assert.equal(page1.events[0].facts[0].kind, 'item_ready');
    const page2 = (await call(a.url, 'GET', '/workgraph/events?after_seq=2&limit=10')).body;
    assert.deepEqual(
      page2.events.map((e: { seq: number }) => e.seq),
      [3, 4, 5],
    );
    assert.equal(page2.has_more, false);
    assert.deepEqual((await call(a.url, 'GET', '/workgraph/events?after_seq=-7&limit=1')).body.events[0].seq, 1);
    assert.equal((await call(a.url, 'GET', '/workgraph/snapshot')).body.event_high_water_mark, 5);
  });

  it('answers bad input with the error envelope and keeps mutation paths off REST', async (t) => {
    const a = await startApp(t, workGraphDriver);
    const cases: Array<[string, string, unknown, number, string]> = [
      ['GET', '/workgraph/events?all_namespaces=true', undefined, 400, 'BAD_REQUEST'],
      ['GET', '/workgraph/items?realm_id=elsewhere', undefined, 400, 'BAD_REQUEST'],
      ['GET', '/workgraph/items?statuses=done', undefined, 400, 'BAD_REQUEST'],
      ['GET', '/workgraph/items?limit=lots', undefined, 400, 'BAD_REQUEST'],
      ['GET', '/workgraph/items?namespace=bad%20ns', undefined, 400, 'BAD_REQUEST'],
      ['GET', '/workgraph/items/work_missing', undefined, 404, 'NOT_FOUND'],
      ['POST', '/workgraph/goal/status', { binding_id: 'attention_missing' }, 404, 'NOT_FOUND'],
      ['POST', '/workgraph/goal/status', {}, 400, 'BAD_REQUEST'],
      ['POST', '/workgraph/attention/list', { status: 'sleeping' }, 400, 'BAD_REQUEST'],
      ['POST', '/workgraph/items', { title: 'x' }, 405, 'METHOD_NOT_ALLOWED'],
      ['POST', '/workgraph/items/work_1/claim', {}, 404, 'NOT_FOUND'],
      ['POST', '/workgraph/items/work_1/close', {}, 404, 'NOT_FOUND'],
      ['POST', '/workgraph/link', {}, 404, 'NOT_FOUND'],
      ['POST', '/workgraph/goal/create', {}, 404, 'NOT_FOUND'],
      ['POST', '/workgraph/attention/pause', {}, 404, 'NOT_FOUND'],
    ];
    for (const [method, path, body, status, code] of cases) {
      const res = await call(a.url, method, path, body);
      assert.equal(res.status, status, `${method} ${path}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.code, code, `${method} ${path}`);
      assert.equal(typeof res.body.error, 'string');
    }
    assert.deepEqual((await call(a.url, 'POST', '/workgraph/attention/list', {})).body, { attention: [] });
  });
});

describe('workgraph durability', () => {
  for (const backend of ['lmdb', 'sqlite', 'jsonl', 'memory'] as const) {
    it(`keeps items, edges, claims and the event log across a restart (${backend})`, async (t) => {
      const dir = await tmpDir('warren-wg-');
      t.after(() => dir.cleanup());
      const start = () => {
        const provider = createScriptedProvider(workGraphDriver);
        return createApp({
          host: '127.0.0.1',
          port: 0,
          stateRoot: dir.path,
          contextRoot: dir.path,
          realm: 'wg',
          realmBackend: backend,
          logger: pino({ level: 'silent' }),
          providerOverrides: { openai: provider, anthropic: provider, gemini: provider, scripted: provider },
        });
      };
      let app = await start();
      const s = (await agentOk(app.url, 'workgraph_list', {})).sessionId;
      const a = (await agentOk(app.url, 'workgraph_create', { title: 'a' }, s)).result;
      const b = (await agentOk(app.url, 'workgraph_create', { title: 'b', blocked_by: [a.id] }, s)).result;
      await agentOk(app.url, 'workgraph_claim', { item_id: a.id, expected_revision: 1 }, s);
      const before = (await call(app.url, 'GET', '/workgraph/snapshot')).body;
      await app.close();
      app = await start();
      t.after(() => app.close());
      const after = (await call(app.url, 'GET', '/workgraph/snapshot')).body;
      if (backend === 'memory') {
        assert.deepEqual(after.items, []);
        return;
      }
      assert.deepEqual(after.items, before.items);
      assert.deepEqual(after.edges, before.edges);
      assert.equal(after.event_high_water_mark, 3);
      assert.deepEqual(after.ready_item_ids, []);
      // The log continues where it stopped.
      await agentOk(app.url, 'workgraph_close', { item_id: a.id, expected_revision: 2, status: 'completed' }, s);
      const evs = (await call(app.url, 'GET', '/workgraph/events?after_seq=3')).body.events;
      assert.deepEqual(
        evs.map((e: { seq: number; kind: string }) => [e.seq, e.kind]),
        [[4, 'closed']],
      );
      assert.deepEqual(
        (await call(app.url, 'GET', '/workgraph/ready')).body.items.map((i: { id: string }) => i.id),
        [b.id],
      );
    });
  }

  it('re-arms leases after a restart: an expiry due while the server was down is still observed', async (t) => {
    const dir = await tmpDir('warren-wg-');
    t.after(() => dir.cleanup());
    const start = () => {
      const provider = createScriptedProvider(workGraphDriver);
      return createApp({
        host: '127.0.0.1',
        port: 0,
        stateRoot: dir.path,
        contextRoot: dir.path,
        realm: 'wg',
        logger: pino({ level: 'silent' }),
        providerOverrides: { openai: provider, anthropic: provider, gemini: provider, scripted: provider },
      });
    };
    let app = await start();
    const item = (await agentOk(app.url, 'workgraph_create', { title: 'leased', namespace: 'ops' })).result;
    const claim = await agentOk(app.url, 'workgraph_claim', { namespace: 'ops', item_id: item.id, expected_revision: 1, lease_ms: 1500 });
    await app.close();
    app = await start();
    t.after(() => app.close());
    // The restarted server wakes namespaces with live leases at startup (resumeLeases); any read of the
    // namespace would also sweep a due lease first, through the item's machine.
    const fact = await poll('the lease expiry after the restart', async () => {
      const evs = (await call(app.url, 'GET', '/workgraph/events?namespace=ops')).body.events;
      return evs.flatMap((e: any) => e.facts ?? []).find((f: any) => f.kind === 'lease_expired');
    });
    assert.deepEqual(fact.owner_key, { kind: 'session', id: claim.sessionId });
  });
});
