import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { SessionActor } from '../../actors/session/session-actor.ts';
import type { PersistedState, SessionDeps } from '../../actors/session/session-types.ts';
import { defaultConfig } from '../../config/toml.ts';
import { createScriptedProvider } from '../../providers/scripted.ts';
import { openLmdbStore } from '../../storage/lmdb-store.ts';
import type { SessionRecord } from '../../storage/store.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';
import { sessionSettings } from '../helpers/store-builders.ts';

async function setup(t: { after(fn: () => Promise<void>): void }) {
  const dir = await tmpDir('warren-core-');
  const store = await openLmdbStore(dir.path);
  t.after(async () => {
    await store.close();
    await dir.cleanup();
  });
  const provider = createScriptedProvider([{ text: 'one' }, { text: 'two' }]);
  const deps: SessionDeps = {
    store,
    log: pino({ level: 'silent' }),
    realmId: 'r',
    contextRoot: dir.path,
    providers: { resolve: () => ({ provider, name: 'scripted', model: 'scripted' }) },
    config: () => defaultConfig(),
    buildToolset: () => null,
    now: Date.now,
  };
  const state: PersistedState = {
    v: 1,
    machine: null,
    sysctx: {},
    prompts: {},
    revision: 0,
    settings: sessionSettings(),
  };
  const record: SessionRecord = {
    v: 2,
    session_id: 's1',
    created_at_ms: 1,
    updated_at_ms: 1,
    archived: false,
    labels: {},
    message_count: 0,
    total_tokens: 0,
    state,
  };
  return { store, deps, record, provider };
}

const turn = (requestId: string) => ({
  requestId,
  kind: 'continue' as const,
  prompt: 'hi',
  signal: new AbortController().signal,
  onCommitting: () => {},
});

describe('session core (real lmdb)', () => {
  it('sheds the live actor of an idle session and wakes it with its state on the next turn', async (t) => {
    const { store, deps, record } = await setup(t);
    const actor = new SessionActor(record, 0, deps);
    await actor.persist();
    const first = await actor.runTurn(turn('r1'));
    assert.equal(first.text, 'one');
    assert.equal(actor.machine.getSnapshot().context.generation, 1);
    assert.equal(actor.shed(), true, 'an idle session sheds');
    assert.equal(actor.status().state, 'idle', 'status is read from the persisted snapshot');
    assert.equal(actor.shed(), false, 'nothing left to shed');
    const second = await actor.runTurn(turn('r2'));
    assert.equal(second.text, 'two');
    assert.equal(actor.machine.getSnapshot().context.generation, 2, 'the woken machine continued from its snapshot');
    assert.equal(actor.machine.getSnapshot().context.turnCount, 2);
    assert.equal((await store.readRows('s1')).total, 4);
    assert.equal(await store.lastLedgerSeq('s1'), actor.hub.lastSeq, 'event sequence continues across the shed');
  });

  it('does not shed a running session', async (t) => {
    const { deps, record } = await setup(t);
    const actor = new SessionActor(record, 0, deps);
    actor.machine.send({ type: 'turn.requested', requestId: 'rx', ticket: 1, work: { run: () => new Promise(() => {}) } });
    assert.equal(actor.isRunning(), true);
    assert.equal(actor.shed(), false);
    assert.equal(actor.isRunning(), true);
  });

  it('serves consecutive turns from the cached transcript, and any other row write invalidates it', async (t) => {
    const { store, deps, record, provider } = await setup(t);
    const actor = new SessionActor(record, 0, deps);
    await actor.persist();
    await actor.runTurn(turn('r1'));
    // A row rewritten in place outside a turn (as system_prompt does; the count does not change) must
    // reach the next model call.
    await actor.mutate((state) => {
      state.revision++;
      return {
        ops: [
          {
            op: 'putRows',
            sessionId: 's1',
            fromIndex: 0,
            rows: [{ role: 'system', content: 'ctx-rewritten', created_at: '2026-01-01T00:00:00.000Z' }],
          },
        ],
      };
    });
    await actor.runTurn(turn('r2'));
    const second = provider.requests[1];
    assert.match(second.system ?? '', /ctx-rewritten/);
    assert.deepEqual(
      second.messages.map((m) => m.role),
      ['block_assistant', 'user'],
    );
    assert.equal((await store.readRows('s1')).total, 4);
  });
});
