// test/integration/durability-kill.test.ts: kill -9 of a real `warren serve` process at random moments of
// its turns, many times, then restart on the same realm and check what survived (SPEC.md "Errors": durable
// resume holds; "Limits": durability). Claim under test: no acknowledged turn is ever lost; after a restart
// every session is readable and well-formed, and each one either runs a new turn or answers 409
// SESSION_NOT_RUNNING with the durable_resume_hold payload. Never corrupt, never a 500.
//
// Each backend runs a fixed seed set plus one random seed (each seed's test names it); a seed fixes the script and
// the kill plan, the OS still decides the interleaving. Reproduce one with WARREN_KILL_SEED=<seed> (that seed
// alone); WARREN_KILL_LMDB / _SQLITE / _JSONL change the number of kills of the fixed (or pinned) seed.
// A campaign's kills take the three kill points in turn (mid-turn, on a durable event, between turns; the
// seed draws which comes first), so three kills cover every kill point on a backend. `npm test` runs a short
// campaign (3 / 3 / 3 kills of the fixed seed on lmdb / sqlite / jsonl: each kill point on each backend);
// WARREN_LONG_CAMPAIGNS=1 a long one (16 / 8 / 6).
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { startServerProcess, writeRealmConfig, type ServerProcess } from '../helpers/server-process.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';
import { envInt, killSeeds, prng, intIn, scriptReplies, request, forEachLimit, parseHistory } from '../helpers/durability-tools.ts';
import type { Rng, TurnRec, SessRec, Mode, Stats, Reply } from '../helpers/durability-tools.ts';

/** Fixed seeds (kept: every run replays their kill plans) and one random seed; WARREN_KILL_SEED pins one. */
const SEEDS = killSeeds('WARREN_KILL_SEED', [0x5eed0001]);
const LONG = process.env.WARREN_LONG_CAMPAIGNS === '1';
const LMDB_KILLS = envInt('WARREN_KILL_LMDB') ?? (LONG ? 16 : 3);
const JSONL_KILLS = envInt('WARREN_KILL_JSONL') ?? (LONG ? 6 : 3);
const SQLITE_KILLS = envInt('WARREN_KILL_SQLITE') ?? (LONG ? 8 : 3);
/** Concurrent client loops, each driving one session at a time. */
const WORKERS = 3;
const HOLD_CLASSES = new Set(['tail_held_for_recovery', 'recovery_refused', 'evidence_quarantined']);
/** The kill points, taken in turn by a campaign's kills. */
const KILL_POINTS: readonly Mode[] = ['mid', 'phase', 'between'];

interface Campaign {
  t: TestContext;
  backend: 'lmdb' | 'sqlite' | 'jsonl';
  kills: number;
  seed: number;
}

async function runCampaign({ t, backend, kills, seed }: Campaign): Promise<Stats> {
  const rng = prng(seed);
  const dir = await tmpDir(`warren-kill-${backend}-`);
  t.after(() => dir.cleanup());
  const realm = `kill-${backend}`;
  // Lossless ledger mode: this test checks every event, deltas included, across kills.
  await writeRealmConfig(dir.path, realm, {
    ledger: { keep_text_deltas: true },
    providers: { scripted: { replies: scriptReplies(rng, 400) } },
  });
  const sessions: SessRec[] = [];
  const stats: Stats = {
    kills: { mid: 0, phase: 0, between: 0 },
    ackedTurns: 0,
    settledCommitted: 0,
    settledLost: 0,
    holds: 0,
    phases: {},
    probes: 0,
    restartMs: [],
  };
  const where = (iteration: number) => `[${backend} seed=${seed} iteration=${iteration}]`;

  const start = async (): Promise<ServerProcess> => {
    const began = performance.now();
    const server = await startServerProcess({ stateRoot: dir.path, realm, backend, t });
    stats.restartMs.push(Math.round(performance.now() - began));
    return server;
  };

  const firstPoint = intIn(rng, 0, KILL_POINTS.length - 1);
  let server = await start();
  for (let iteration = 0; iteration <= kills; iteration++) {
    const final = iteration === kills;
    await verify(server, sessions, stats, where(iteration), { probeAll: final });
    if (final) break;
    const mode = KILL_POINTS[(firstPoint + iteration) % KILL_POINTS.length];
    await driveUntilKill(server, sessions, stats, rng, { iteration, mode }, where(iteration));
    server = await start();
  }
  await server.kill('SIGKILL');
  return stats;
}

/** Event kinds a phase-targeted kill waits for (repeats weight the draw; run_completed is the commit window). */
const TARGET_EVENTS = [
  'run_started',
  'turn_started',
  'text_delta',
  'text_delta',
  'tool_execution_started',
  'turn_completed',
  'run_completed',
  'run_completed',
  'run_completed',
];

/**
 * Follows a session's SSE stream and calls `onHit` once when an event of kind `kind` arrives (persistent
 * realms deliver an event only once it is durable). Resolves once the stream has opened; `close()` stops.
 */
async function watchEvents(url: string, id: string, kind: string, onHit: () => void): Promise<{ close(): void }> {
  const ctl = new AbortController();
  const res = await fetch(`${url}/sessions/${id}/events`, { signal: ctl.signal });
  assert.equal(res.status, 200, `events of ${id}: ${res.status}`);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let opened!: () => void;
  const open = new Promise<void>((resolve) => (opened = resolve));
  let hit = false;
  const pump = async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = /^event: (.*)$/m.exec(frame)?.[1];
        // The first frame (session_loaded) comes after the subscription: from here no event is missed.
        opened();
        if (event === kind && !hit) {
          hit = true;
          onHit();
        }
      }
    }
  };
  // The stream dies with the server; that is the expected end.
  pump()
    .catch(() => {})
    .finally(opened);
  const timer = setTimeout(opened, 2_000); // no opening frame at all: follow anyway rather than hang
  await open;
  clearTimeout(timer);
  return { close: () => ctl.abort() };
}

/**
 * Drives WORKERS client loops of create/continue turns and SIGKILLs the server at the kill point `mode`, at
 * a random moment: 2-60 ms after some turn starts (mid), when a chosen event of a running turn becomes
 * durable (phase), or with every turn answered (between).
 */
async function driveUntilKill(
  server: ServerProcess,
  sessions: SessRec[],
  stats: Stats,
  rng: Rng,
  { iteration, mode }: { iteration: number; mode: Mode },
  where: string,
): Promise<void> {
  let trigger = intIn(rng, 1, 7);
  const delayMs = intIn(rng, 2, 60);
  const target = TARGET_EVENTS[intIn(rng, 0, TARGET_EVENTS.length - 1)];
  const phaseSlackMs = intIn(rng, 0, 2);
  let started = 0;
  let stopping = false;
  let killedByUs = false;
  let killed: Promise<unknown> | undefined;
  let watcher: { close(): void } | undefined;
  const unexpected: string[] = [];
  const crashes: string[] = [];
  let nextKey = sessions.length;

  const kill = () => {
    killedByUs = true;
    return server.kill('SIGKILL');
  };
  const killAfter = (ms: number) => {
    killed ??= (ms > 0 ? sleep(ms) : Promise.resolve()).then(kill);
  };

  const pick = (): SessRec | undefined => {
    const ready = sessions.filter((s) => s.id && !s.busy && !s.held && !s.gone);
    if (ready.length < 3 || rng() < 0.25) return undefined;
    return ready[intIn(rng, 0, ready.length - 1)];
  };

  const worker = async () => {
    while (!stopping && !killedByUs) {
      let sess = pick();
      const create = !sess;
      if (!sess) {
        sess = { key: `k${nextKey++}`, turns: [], busy: false, held: false, gone: false, touched: true };
        sessions.push(sess);
      }
      sess.busy = true;
      sess.touched = true;
      let isTrigger = ++started === trigger;
      if (isTrigger && mode === 'phase' && create) {
        // A create has no stream to follow yet: the next turn is the one followed.
        trigger++;
        isTrigger = false;
      }
      if (isTrigger && mode === 'phase') watcher = await watchEvents(server.url, sess.id!, target, () => killAfter(phaseSlackMs));
      if (killedByUs) return;
      const turn: TurnRec = { prompt: `${sess.key}#${sess.turns.length}`, outcome: 'unknown', iteration };
      sess.turns.push(turn);
      if (isTrigger && mode === 'mid') killAfter(delayMs);
      if (isTrigger && mode === 'between') stopping = true;
      let reply: Reply;
      try {
        reply = create
          ? await request(server.url, 'POST', '/sessions', {
              prompt: turn.prompt,
              provider: 'scripted',
              labels: { dk: sess.key },
              enable_builtins: true,
            })
          : await request(server.url, 'POST', `/sessions/${sess.id}/messages`, { session_id: sess.id, prompt: turn.prompt });
      } catch (err) {
        // The connection died with the turn open: its outcome is settled after the restart.
        if (!killedByUs) crashes.push(`${turn.prompt}: ${String(err)}`);
        return;
      }
      if (reply.status !== 200) {
        unexpected.push(`${turn.prompt} -> ${reply.status} ${JSON.stringify(reply.body)}`);
        return;
      }
      turn.outcome = 'acked';
      turn.text = reply.body.text;
      stats.ackedTurns++;
      if (create) sess.id = reply.body.session_id;
      sess.busy = false;
      // The followed turn ended without the chosen event (e.g. no tool call): kill now.
      if (isTrigger && mode === 'phase') killAfter(0);
    }
  };

  await Promise.all(Array.from({ length: WORKERS }, worker));
  // Between: every turn answered, but the server may still be writing after its replies; kill within a
  // few ms. Otherwise a no-op, unless every loop stopped early (a non-200, reported below) with no kill yet.
  if (mode === 'between') await sleep(intIn(rng, 0, 3));
  killAfter(0);
  await killed;
  watcher?.close();
  const exit = await server.exited;
  stats.kills[mode]++;
  const context = `${where} mode=${mode} trigger=${trigger} delay=${delayMs}ms target=${target}`;
  assert.deepEqual(
    crashes,
    [],
    `${context}: the server died on its own (exit ${JSON.stringify(exit)}): ${server.stderr()}\n${JSON.stringify(server.logs.slice(-10))}`,
  );
  assert.equal(exit.signal, 'SIGKILL', `${context}: server exit ${JSON.stringify(exit)}`);
  assert.deepEqual(unexpected, [], `${context}: a turn before the kill got a non-200 reply`);
  for (const s of sessions) s.busy = false;
}

/**
 * After a restart: every session listed and readable, history well-formed and holding every acknowledged
 * turn, in-flight turns settled (committed or lost, never half), then a probe turn on each session that
 * moved (or all of them): 200, or 409 SESSION_NOT_RUNNING with the durable_resume_hold payload.
 */
async function verify(server: ServerProcess, sessions: SessRec[], stats: Stats, where: string, opts: { probeAll: boolean }): Promise<void> {
  const url = server.url;
  const all: Array<{ session_id: string; message_count: number; labels?: Record<string, string> }> = [];
  for (let offset = 0; ;) {
    const page = await request(url, 'GET', `/sessions?offset=${offset}&limit=100`);
    assert.equal(page.status, 200, `${where} GET /sessions: ${JSON.stringify(page.body)}`);
    all.push(...page.body.sessions);
    offset += page.body.sessions.length;
    if (page.body.sessions.length < 100) break;
  }
  const listed = new Map<string, { session_id: string; message_count: number }>();
  for (const s of all) {
    const key = s.labels?.dk;
    assert.ok(key, `${where} listed session ${s.session_id} carries no dk label`);
    assert.ok(!listed.has(key), `${where} two sessions for one create (${key})`);
    listed.set(key, s);
  }
  for (const key of listed.keys())
    assert.ok(
      sessions.some((s) => s.key === key),
      `${where} listed session ${key} was never created by the client`,
    );

  const present: SessRec[] = [];
  for (const sess of sessions) {
    if (sess.gone) {
      assert.ok(!listed.has(sess.key), `${where} session ${sess.key} whose create was lost came back`);
      continue;
    }
    const entry = listed.get(sess.key);
    if (!entry) {
      assert.equal(sess.id, undefined, `${where} session ${sess.key} (${sess.id}) vanished from GET /sessions`);
      // Its create was in flight at the kill and never became durable.
      assert.equal(sess.turns.length, 1);
      assert.equal(sess.turns[0].outcome, 'unknown');
      sess.turns[0].outcome = 'lost';
      stats.settledLost++;
      sess.gone = true;
      continue;
    }
    if (sess.id === undefined) sess.id = entry.session_id;
    assert.equal(entry.session_id, sess.id, `${where} session ${sess.key} changed id`);
    present.push(sess);
  }

  await forEachLimit(present, 8, async (sess) => {
    const id = sess.id!;
    // status hydrates the session (recovery runs here); its state goes into every later message.
    const status = await request(url, 'GET', `/sessions/${id}/status`);
    assert.equal(status.status, 200, `${where} session ${sess.key} (${id}) status: ${JSON.stringify(status.body)}`);
    const label = `${where} session ${sess.key} (${id}, ${status.body.state})`;
    assert.ok(
      status.body.state === 'idle' || status.body.state === 'held',
      `${label} is not idle or held right after a restart: ${JSON.stringify(status.body)}`,
    );
    const detail = await request(url, 'GET', `/sessions/${id}`);
    assert.equal(detail.status, 200, `${label} detail: ${JSON.stringify(detail.body)}`);
    const rows: unknown[] = [];
    let count = -1;
    for (let more = true; more;) {
      const hist = await request(url, 'GET', `/sessions/${id}/history?offset=${rows.length}&limit=500`);
      assert.equal(hist.status, 200, `${label} history: ${JSON.stringify(hist.body)}`);
      assert.ok(count < 0 || hist.body.message_count === count, `${label} message_count moved while paging history`);
      count = hist.body.message_count;
      rows.push(...hist.body.messages);
      more = hist.body.has_more === true && hist.body.messages.length > 0;
    }
    assert.equal(rows.length, count, `${label} history returned ${rows.length} rows of ${count}`);
    assert.equal(detail.body.message_count, count, `${label} detail and history disagree on message_count`);
    assert.equal(listed.get(sess.key)!.message_count, count, `${label} list and history disagree on message_count`);

    const parsed = parseHistory(rows);
    assert.equal(parsed.problem, undefined, `${label} history is malformed: ${parsed.problem}`);
    const alive = sess.turns.filter((x) => x.outcome !== 'lost');
    const pending = alive.at(-1)?.outcome === 'unknown' ? alive.at(-1) : undefined;
    assert.ok(
      alive.slice(0, -1).every((x) => x.outcome !== 'unknown'),
      `${label} more than one unsettled turn`,
    );
    const want = alive.map((x) => x.prompt);
    const got = parsed.turns.map((x) => x.prompt);
    const withoutPending = pending ? want.slice(0, -1) : want;
    const matches =
      JSON.stringify(got) === JSON.stringify(want) || (pending !== undefined && JSON.stringify(got) === JSON.stringify(withoutPending));
    assert.ok(matches, `${label} history turns ${JSON.stringify(got)} do not match the client's ${JSON.stringify(alive)}`);
    parsed.turns.forEach((h, i) => {
      const rec = alive[i];
      if (rec.outcome === 'acked' || rec.outcome === 'committed') {
        assert.equal(h.text, rec.text, `${label} turn ${rec.prompt} text changed: history '${h.text}', acknowledged '${rec.text}'`);
      }
    });
    if (pending) {
      const committed = got.length === want.length;
      pending.outcome = committed ? 'committed' : 'lost';
      if (committed) {
        pending.text = parsed.turns.at(-1)!.text;
        stats.settledCommitted++;
      } else stats.settledLost++;
      await classifyKill(url, id, pending, stats, label);
    }
    if (status.body.state === 'held') checkHoldPayload(status.body.durable_resume_hold, id, label);
  });

  const probe = present.filter((s) => opts.probeAll || s.touched);
  await forEachLimit(probe, 8, async (sess) => {
    const id = sess.id!;
    const label = `${where} probe of ${sess.key} (${id})`;
    const turn: TurnRec = { prompt: `${sess.key}#${sess.turns.length}`, outcome: 'unknown', iteration: -1 };
    const reply = await request(url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: turn.prompt });
    stats.probes++;
    if (reply.status === 200) {
      turn.outcome = 'acked';
      turn.text = reply.body.text;
      sess.turns.push(turn);
      stats.ackedTurns++;
      assert.ok(!sess.held, `${label}: a held session ran a turn without its hold being cleared`);
    } else {
      assert.equal(reply.status, 409, `${label}: expected 200 or a 409 resume hold, got ${reply.status} ${JSON.stringify(reply.body)}`);
      assert.equal(reply.body.code, 'SESSION_NOT_RUNNING', `${label}: ${JSON.stringify(reply.body)}`);
      checkHoldPayload(reply.body.details?.durable_resume_hold, id, label);
      if (!sess.held) stats.holds++;
      sess.held = true;
    }
    sess.touched = false;
  });
  const fatal = server.logs.filter((l) => (l.level ?? 0) >= 60);
  assert.deepEqual(fatal, [], `${where} fatal log lines after the restart`);
}

function checkHoldPayload(hold: unknown, sessionId: string, label: string): void {
  const h = hold as { hold_class?: string; session_error_code?: string; session_id?: string; content_retained?: boolean } | undefined;
  assert.ok(h && typeof h === 'object', `${label}: no durable_resume_hold payload`);
  assert.ok(HOLD_CLASSES.has(h.hold_class ?? ''), `${label}: hold_class ${h.hold_class}`);
  assert.equal(h.session_id, sessionId, `${label}: hold names another session`);
  assert.equal(h.content_retained, true, `${label}: content_retained`);
  if (h.session_error_code !== undefined) assert.match(h.session_error_code, /^SESSION_DURABLE_/, label);
}

/**
 * Where did the kill land in a turn that was in flight? The furthest durable ledger event of its run says.
 * The ledger must be gapless, and a run the transcript does not hold must not claim run_completed.
 */
async function classifyKill(url: string, id: string, turn: TurnRec, stats: Stats, label: string): Promise<void> {
  const events: Array<{ seq: number; payload: { type: string; input?: { content?: unknown } } }> = [];
  let after = 0;
  for (;;) {
    const page = await request(url, 'GET', `/sessions/${id}/ledger?after_seq=${after}&limit=1000`);
    assert.equal(page.status, 200, `${label} ledger: ${JSON.stringify(page.body)}`);
    events.push(...page.body.events);
    if (!page.body.has_more) break;
    after = events.at(-1)!.seq;
  }
  events.forEach((e, i) => assert.equal(e.seq, i + 1, `${label} ledger seq ${e.seq} at position ${i + 1}`));
  const startAt = events.findIndex((e) => e.payload.type === 'run_started' && e.payload.input?.content === turn.prompt);
  let phase: string;
  if (startAt < 0) phase = 'before run_started';
  else {
    const run = events.slice(startAt + 1);
    const end = run.findIndex((e) => e.payload.type === 'run_started');
    const kinds = (end < 0 ? run : run.slice(0, end)).map((e) => e.payload.type);
    if (turn.outcome === 'lost') {
      assert.ok(
        !kinds.includes('run_completed'),
        `${label} the ledger says run_completed for '${turn.prompt}', but the transcript does not hold that turn`,
      );
    }
    const last = kinds.at(-1) ?? 'run_started';
    phase = kinds.includes('run_completed')
      ? 'run_completed'
      : kinds.includes('tool_call_requested')
        ? `${last} (after a tool call)`
        : last;
  }
  const bucket = `${phase} -> ${turn.outcome}`;
  stats.phases[bucket] = (stats.phases[bucket] ?? 0) + 1;
}

function report(t: TestContext, backend: string, seed: number, stats: Stats, elapsedMs: number): void {
  const avgRestart = Math.round(stats.restartMs.reduce((a, b) => a + b, 0) / Math.max(1, stats.restartMs.length));
  t.diagnostic(
    `${backend} seed=${seed}: ${stats.kills.mid + stats.kills.phase + stats.kills.between} kills (${stats.kills.mid} timed mid-turn, ${stats.kills.phase} on a durable event, ${stats.kills.between} between turns), ` +
      `${stats.ackedTurns} acknowledged turns, in flight at a kill: ${stats.settledCommitted} committed + ${stats.settledLost} lost, ` +
      `${stats.holds} resume holds, ${stats.probes} probes, restart avg ${avgRestart} ms, ${Math.round(elapsedMs)} ms total`,
  );
  t.diagnostic(`${backend} kill landed (furthest durable ledger event -> outcome): ${JSON.stringify(stats.phases)}`);
}

describe('kill -9 durability (real server process)', () => {
  const BACKENDS = [
    ['lmdb', LMDB_KILLS, 0],
    ['sqlite', SQLITE_KILLS, 2],
    ['jsonl', JSONL_KILLS, 1],
  ] as const;
  for (const [backend, total, offset] of BACKENDS) {
    // The fixed seed (or a pinned one) runs the backend's full kill count; the extra random seed one kill,
    // to keep the file's time near what one campaign per backend costs. Each backend its own plans.
    for (const [i, base] of SEEDS.entries()) {
      const kills = i === 0 ? total : 1;
      const seed = (base + offset) >>> 0;
      it(
        `${backend}: ${kills} random SIGKILLs (seed ${seed}) lose no acknowledged turn and leave every session readable and resumable or held`,
        { timeout: 120_000 },
        async (t) => {
          t.diagnostic(`${backend} seed ${seed} (rerun alone with WARREN_KILL_SEED=${base})`);
          const began = performance.now();
          const stats = await runCampaign({ t, backend, kills, seed });
          report(t, backend, seed, stats, performance.now() - began);
        },
      );
    }
  }
});
