// test/storage/record-kinds.test.ts: every generic record kind is read through its schema. For each kind,
// a well-formed record written into a real LMDB store reads back, and a corrupt one written straight into
// the store is refused through readRecord/readRecords with SESSION_STORE_ERROR naming namespace and key.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isServiceError } from '../../contracts/errors.ts';
import { openLmdbStore } from '../../storage/lmdb-store.ts';
import * as K from '../../storage/record-kinds.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';

const sealed = { v: 1, iv: 'aXY=', tag: 'dGFn', data: 'ZGF0YQ==' };

/**
 * Per kind: a record as the owner writes it, and a corruption of it. The mob and work-binding records are
 * large; their well-formed reads are covered by the mob and work-binding integration suites.
 */
const CASES: Array<{ kind: K.RecordKind<unknown>; suffix?: string; good?: unknown; bad: unknown }> = [
  {
    kind: K.SCHEDULE_KIND,
    good: {
      v: 1,
      rev: 1,
      schedule: { schedule_id: 's1', labels: {} },
      machine: { value: 'active', context: { scheduleId: 's1', revision: 1 } },
    },
    bad: { v: 1, rev: 'one', schedule: { schedule_id: 's1' }, machine: { value: 'active', context: { scheduleId: 's1', revision: 1 } } },
  },
  {
    kind: K.OCCURRENCE_KIND,
    suffix: 's1',
    good: { v: 1, rev: 1, due_ms: 5, occ: { occurrence_id: 'o1', schedule_id: 's1', occurrence_ordinal: 0, phase: 'pending' } },
    bad: { v: 1, rev: 1, occ: { occurrence_id: 'o1', schedule_id: 's1', occurrence_ordinal: 0, phase: 'pending' } },
  },
  {
    kind: K.AUTH_PROFILE_KIND,
    good: { v: 1, id: 'p', provider: 'anthropic', auth_method: 'api_key', has_secret: true, has_refresh_token: false },
    bad: { v: 1, id: 'p', provider: 'anthropic', auth_method: 'api_key', has_secret: 'yes', has_refresh_token: false },
  },
  { kind: K.AUTH_BINDING_KIND, good: { v: 1, id: 'b', backend_profile: 'x', auth_profile: 'p' }, bad: { v: 1, id: 'b', auth_profile: 7 } },
  { kind: K.AUTH_SECRET_KIND, good: sealed, bad: { ...sealed, tag: null } },
  {
    kind: K.AUTH_LOGIN_KIND,
    good: { v: 1, kind: 'pkce', provider: 'openai', binding_id: 'b', profile_id: null, verifier: sealed, expires_at_ms: 9 },
    bad: { v: 1, kind: 'magic', provider: 'openai', binding_id: 'b', profile_id: null, expires_at_ms: 9 },
  },
  {
    kind: K.COMPACTION_KIND,
    good: { v: 1, count: 1, last_at_ms: 1, messages_before: 9, messages_after: 3, tokens_before: 900, tokens_after: 300 },
    bad: { v: 1, count: 1.5, last_at_ms: 1, messages_before: 9, messages_after: 3, tokens_before: 900, tokens_after: 300 },
  },
  {
    kind: K.DETACHED_KIND,
    good: { v: 1, request_id: 'r', session_id: 's', kind: 'create', status: 'running', boot: 'b', created_ms: 1 },
    bad: { v: 1, request_id: 'r', session_id: 's', kind: 'create', status: 'running', created_ms: 1 },
  },
  {
    kind: K.PROTOCOL_TURN_KIND,
    good: { v: 1, id: 'resp_1', protocol: 'openai', session_id: 's', first_seq: 1, status: 'completed', boot: 'b', created_ms: 1 },
    bad: { v: 1, id: 'resp_1', protocol: 'openai', session_id: 's', first_seq: 1, status: 'exploded', boot: 'b', created_ms: 1 },
  },
  {
    kind: K.PROTOCOL_TURN_REF_KIND,
    suffix: 's1',
    good: { v: 1, id: 'a2a_t1', protocol: 'a2a', created_ms: 1 },
    bad: { v: 1, id: 'a2a_t1', protocol: 'a2a' },
  },
  {
    kind: K.MCP_PERSISTED_KIND,
    good: { v: 1, added: [{ name: 'fs', command: 'x' }], removed: [] },
    bad: { v: 1, added: 'fs', removed: [] },
  },
  {
    kind: K.QUEUED_TURN_KIND,
    good: { v: 1, session_id: 's', seq: 1, request_id: 'r', policy: 'enqueue', detached: false, created_ms: 1, body: { prompt: 'hi' } },
    bad: { v: 1, session_id: 's', seq: 1, request_id: 'r', policy: 'later', detached: false, created_ms: 1, body: { prompt: 'hi' } },
  },
  {
    kind: K.WEBHOOK_SUBSCRIPTION_KIND,
    good: { v: 1, id: 'w', url: 'http://127.0.0.1/x', events: ['turn.completed'], sealed_secret: sealed, created_ms: 1 },
    bad: { v: 1, id: 'w', url: 'http://127.0.0.1/x', events: 'turn.completed', created_ms: 1 },
  },
  {
    kind: K.WEBHOOK_DELIVERY_KIND,
    suffix: 'w',
    good: {
      v: 1,
      id: 'd',
      subscription_id: 'w',
      session_id: 's',
      seq: 1,
      event: 'e',
      body: '{}',
      status: 'pending',
      attempts: 0,
      created_ms: 1,
      next_attempt_ms: 1,
    },
    bad: {
      v: 1,
      id: 'd',
      subscription_id: 'w',
      session_id: 's',
      seq: 1,
      event: 'e',
      body: '{}',
      status: 'lost',
      attempts: 0,
      created_ms: 1,
      next_attempt_ms: 1,
    },
  },
  {
    kind: K.REPLAY_REPORT_KIND,
    good: {
      source_session_id: 'a',
      replay_session_id: 'b',
      status: 'identical',
      turns: 1,
      turns_replayed: 1,
      calls_checked: 1,
      tools_answered: 0,
      duration_ms: 3,
    },
    bad: { source_session_id: 'a', replay_session_id: 'b', status: 'identical', turns: 1 },
  },
  {
    kind: K.TURN_RECORDING_KIND,
    suffix: 's',
    good: { v: 1, started_at_ms: 1, request_id: 'r', at_row: 0, rows: 2, input: { prompt: 'hi' }, calls: [], tools: [] },
    bad: { v: 1, started_at_ms: 1, request_id: 'r', at_row: -1, rows: 2, input: { prompt: 'hi' }, calls: [], tools: [] },
  },
  {
    kind: K.RECORDING_PRUNED_KIND,
    good: { v: 1, turns: 2, through_started_at_ms: 5, at_ms: 9 },
    bad: { v: 1, turns: 0, through_started_at_ms: 5, at_ms: 9 },
  },
  { kind: K.MOB_KIND, bad: { v: 1, mob_id: 'm', state: 'running', members: 'none' } },
  { kind: K.FLOW_RUN_KIND, bad: { v: 1, run_id: 'r', mob_id: 7 } },
  { kind: K.WORK_BINDING_KIND, bad: { v: 1, binding_id: 'b', work_ref: null } },
  { kind: K.BINDING_CHAIN_KIND, good: { v: 1, binding_ids: ['b1'], rev: 1 }, bad: { v: 1, binding_ids: 'b1' } },
  { kind: K.BINDING_KEY_KIND, good: { v: 1, binding_id: 'b1', request_digest: 'd' }, bad: { v: 1, binding_id: 'b1' } },
  {
    kind: K.MOB_GRANT_KIND,
    good: { v: 1, principal: 'key:abc', scopes: ['MobRead'], granted_at_ms: 1 },
    bad: { v: 1, principal: 'key:abc', scopes: ['Everything'], granted_at_ms: 1 },
  },
  {
    kind: K.MOB_EVENT_KIND,
    good: {
      v: 1,
      event_id: 'e',
      cursor: 1,
      mob_id: 'm',
      timestamp_ms: 1,
      kind: 'mob_created',
      run_id: null,
      step_id: null,
      agent_identity: null,
      mob_labels: {},
      run_labels: {},
      data: {},
    },
    bad: { v: 1, event_id: 'e', cursor: 0, mob_id: 'm', timestamp_ms: 1, kind: 'mob_created' },
  },
  { kind: K.MOB_CURSOR_KIND, good: { v: 1, cursor: 3 }, bad: { v: 1, cursor: '3' } },
  // The WorkGraph's well-formed records are read by the WorkGraph suites.
  { kind: K.WG_ITEM_KIND, suffix: 'default', bad: { v: 1, fields: { id: 'i' }, machine: { value: 'open', context: { revision: 1 } } } },
  {
    kind: K.WG_EDGE_KIND,
    suffix: 'default',
    good: { v: 1, edge: { realm_id: 'r', namespace: 'default', from_id: 'a', to_id: 'b', kind: 'blocks', created_at: 'now' } },
    bad: { v: 1, edge: { realm_id: 'r', namespace: 'default', from_id: 'a', to_id: 'b', kind: 'loves', created_at: 'now' } },
  },
  { kind: K.WG_EVENT_KIND, suffix: 'default', bad: { v: 1, event: { seq: 'one' } } },
  { kind: K.WG_ATTENTION_KIND, suffix: 'default', bad: { v: 1, binding: null } },
  { kind: K.WG_META_KIND, good: { v: 1, seq: 4, rev: 2 }, bad: { v: 1, seq: -1 } },
  {
    kind: K.INBOUND_KEY_KIND,
    good: { v: 1, id: '0123456789ab', name: 'ci', scopes: ['read'], salt: 'c2FsdA==', hash: 'aGFzaA==', cost: 16384, created_at_ms: 1 },
    bad: { v: 1, id: '0123456789ab', name: 'ci', scopes: ['root'], salt: 'c2FsdA==', hash: 'aGFzaA==', cost: 16384, created_at_ms: 1 },
  },
  { kind: K.KEY_USAGE_KIND, good: 1700000000000, bad: { at: 1700000000000 } },
  // Written before cluster secrets were validated: no `v`.
  { kind: K.CLUSTER_SECRET_KIND, good: { rev: 1, secret: 'c2VjcmV0' }, bad: { rev: 1, secret: 42 } },
  {
    kind: K.COMMS_AGENT_KIND,
    good: { v: 1, session_id: 's', name: 'alice', keep_alive: false, meta: {} },
    bad: { v: 1, session_id: 's', name: 'alice', keep_alive: 'yes', meta: {} },
  },
  {
    kind: K.COMMS_INBOUND_KIND,
    suffix: 's',
    good: { v: 1, request_id: 'r', from: 'p', intent: 'supervisor.bridge', params: {}, handling_mode: 'queue', state: 'open' },
    bad: { v: 1, request_id: 'r', from: 'p', intent: 'supervisor.bridge', params: {}, handling_mode: 'queue', state: 'lost' },
  },
  {
    kind: K.INBOX_ENTRY_KIND,
    suffix: 's',
    good: { v: 1, id: 'e', kind: 'input', wake: true, handling_mode: 'queue', text: 'hi', admitted_at_ms: 1 },
    bad: { v: 1, id: 'e', kind: 'input', wake: 'true', handling_mode: 'queue', text: 'hi', admitted_at_ms: 1 },
  },
  {
    kind: K.LEASE_KIND,
    good: { v: 1, rev: 2, node_id: 'n1', url: 'http://127.0.0.1:1', expires_at_ms: 5, pid: 10, host: 'h' },
    bad: { v: 1, rev: '2', node_id: 'n1', url: 'http://127.0.0.1:1', expires_at_ms: 5 },
  },
  {
    kind: K.CLUSTER_NODE_KIND,
    good: { v: 1, url: 'http://127.0.0.1:1', started_ms: 1, heartbeat_ms: 2, info: { pid: 10 } },
    bad: { v: 1, url: 'http://127.0.0.1:1', started_ms: 1 },
  },
  {
    kind: K.MEMORY_DOC_KIND,
    suffix: 's',
    good: { v: 1, id: 'd', role: 'user', text: 'hello', created_at: '2026-01-01T00:00:00Z', embedding: [0.5] },
    bad: { v: 1, id: 'd', role: 'robot', text: 'hello', created_at: '2026-01-01T00:00:00Z' },
  },
  // Written before thread records were validated: no `v`.
  { kind: K.LANGGRAPH_THREAD_KIND, good: { thread_id: 't', created_ms: 1, metadata: { a: 1 } }, bad: { thread_id: 't', metadata: 'x' } },
];

async function lmdb(t: { after(fn: () => unknown): void }) {
  const dir = await tmpDir('warren-record-kinds-');
  t.after(() => dir.cleanup());
  const store = await openLmdbStore(dir.path);
  t.after(() => store.close());
  return store;
}

function refusal(ns: string, key: string) {
  return (err: unknown): boolean => {
    assert.ok(isServiceError(err), `expected a ServiceError, got ${String(err)}`);
    assert.equal(err.code, 'SESSION_STORE_ERROR');
    assert.ok(err.message.includes(`${ns}/${key}`), `message names ${ns}/${key}: ${err.message}`);
    return true;
  };
}

describe('record kinds', () => {
  it('every registered kind has a corrupt-record case here', () => {
    const tested = new Set(CASES.map((c) => c.kind.name));
    const missing = K.recordKinds()
      .filter((k) => !tested.has(k.name))
      .map((k) => k.name);
    assert.deepEqual(missing, []);
  });

  for (const c of CASES) {
    it(`${c.kind.name}: a well-formed record reads back, a corrupt one is refused`, async (t) => {
      const store = await lmdb(t);
      const ns = K.namespaceOf(c.kind, c.suffix);
      if (c.good !== undefined) {
        await store.commit([
          { op: 'putRecord', ns, key: 'good', value: c.good },
          { op: 'putRecord', ns, key: 'other', value: c.good },
        ]);
        assert.deepEqual(await K.readRecord(store, c.kind, 'good', c.suffix), c.good);
        assert.equal((await K.readRecords(store, c.kind, c.suffix)).length, 2);
      }
      assert.equal(await K.readRecord(store, c.kind, 'absent', c.suffix), undefined);

      await store.commit([{ op: 'putRecord', ns, key: 'bad', value: c.bad }]);
      await assert.rejects(K.readRecord(store, c.kind, 'bad', c.suffix), refusal(ns, 'bad'));
      await assert.rejects(K.readRecords(store, c.kind, c.suffix), refusal(ns, 'bad'));
      // Not a record at all (a hand edit, a foreign writer).
      await store.commit([{ op: 'putRecord', ns, key: 'bad', value: 'garbage' }]);
      await assert.rejects(K.readRecord(store, c.kind, 'bad', c.suffix), refusal(ns, 'bad'));
      // A reader that goes on past a bad record (sweeps, lookups that fail closed) leaves it out.
      assert.equal(await K.readValidRecord(store, c.kind, 'bad', c.suffix), undefined);
      const valid = await K.readValidRecords(store, c.kind, c.suffix);
      assert.deepEqual(
        valid.map((r) => r.key),
        c.good !== undefined ? ['good', 'other'] : [],
      );
    });
  }

  it('a family of namespaces takes its suffix where the kind says', () => {
    assert.equal(K.namespaceOf(K.OCCURRENCE_KIND, 's1'), 'schedule-occ:s1');
    assert.equal(K.namespaceOf(K.WG_ITEM_KIND, 'team$&'), 'wg/team$&/items');
    assert.equal(K.namespaceOf(K.MOB_KIND), 'mob');
    assert.throws(() => K.namespaceOf(K.MEMORY_DOC_KIND), /needs a namespace suffix/);
  });

  it('a record newer than this build is refused; an older one is migrated by the kind', async (t) => {
    const store = await lmdb(t);
    const kind = K.defineRecordKind({
      name: 'test widget',
      ns: 'test.widget',
      version: 2,
      schema: (await import('typebox')).Type.Object({
        v: (await import('typebox')).Type.Literal(2),
        size: (await import('typebox')).Type.Integer(),
      }),
      migrations: { 1: (r: { v: 1; width: number }) => ({ v: 2, size: r.width }) },
    });
    await store.commit([
      { op: 'putRecord', ns: 'test.widget', key: 'old', value: { v: 1, width: 4 } },
      { op: 'putRecord', ns: 'test.widget', key: 'future', value: { v: 3, size: 4 } },
    ]);
    assert.deepEqual(await K.readRecord(store, kind, 'old'), { v: 2, size: 4 });
    await assert.rejects(K.readRecord(store, kind, 'future'), (err: unknown) => {
      assert.ok(isServiceError(err) && /version 3, newer than 2/.test(err.message), String(err));
      return true;
    });
  });
});
