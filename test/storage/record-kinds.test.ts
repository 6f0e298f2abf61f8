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
      const ns = c.kind.ns + (c.suffix ?? '');
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
    });
  }

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
