// actors/session/session-host.ts: the session actor kind. Registers sessions with the actor registry (hydrate
// from the store, busy while a turn runs, shed when quiet, quarantine a transcript that disagrees with
// its record) and is what session commands and handlers hold: get/getActive/adopt/peek/forget, the
// creation writes in flight, and the session health probes.
import { Compile } from 'typebox/compile';
import type { Config } from '../../contracts/config.ts';
import { sessionMachine } from '../../machines/session-machine.ts';
import { PersistedState } from '../../contracts/records.ts';
import { ServiceError, sessionNotFound } from '../../contracts/errors.ts';
import type { SessionRecord, Store } from '../../storage/store.ts';
import { buildToolset } from '../../tools/registry.ts';
import type { RecordStore } from '../../tools/task-store.ts';
import type { Tool } from '../../tools/tool.ts';
import type { ActorPolicy, KindTable } from '../actor-registry.ts';
import { SessionActor } from './session-actor.ts';
import { SESSION_KIND, type SessionDeps, type SessionExtension, type SessionSettings } from './session-types.ts';

export { SESSION_KIND };
import type { Supervisor } from '../supervisor.ts';
import type { TurnToolset } from './turn-runner.ts';

const checkState = Compile(PersistedState);

export interface SessionPolicy extends ActorPolicy {
  /** A turn running longer than this counts against session_run_start health (ms). */
  overdueRunMs: number;
}

/** The four session health dimensions (wire-notes §2.8), each the number of bad resident sessions. */
export type SessionHealth = Record<'session_liveness' | 'session_durability' | 'session_run_start' | 'session_runtime_loop', number>;

function recordsFor(store: Store, ns: string): RecordStore {
  return {
    get: (key) => store.getRecord(ns, key),
    put: (key, value) => store.commit([{ op: 'putRecord', ns, key, value }]),
    list: (async () => store.listRecords(ns)) as RecordStore['list'],
  };
}

/**
 * The last tool set made of contributed tools only (no builtins or shell, which are bound to one
 * session's records): sessions offered the same tool objects (the schedule tools every session gets by
 * default) share it, so a turn does not rebuild it nor re-measure its specs.
 */
const sharedToolsets = new WeakMap<Supervisor, { extra: readonly Tool[]; toolset: TurnToolset }>();

function sameTools(a: readonly Tool[], b: readonly Tool[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The session's tools: builtins and shell by its flags, plus what other modules contribute. */
function sessionToolset(sup: Supervisor, cfg: Config, sessionId: string, settings: SessionSettings): TurnToolset | null {
  if (settings.tools_off) return null;
  const extra = sup.tools.forSession(sessionId, settings);
  if (!settings.builtins && !settings.shell) {
    if (extra.length === 0) return null;
    const shared = sharedToolsets.get(sup);
    if (shared && sameTools(shared.extra, extra)) return shared.toolset;
    const toolset = buildToolset({ builtins: false, shell: false, records: recordsFor(sup.deps.store, `tasks:${sessionId}`), extra });
    sharedToolsets.set(sup, { extra, toolset });
    return toolset;
  }
  return buildToolset({
    builtins: settings.builtins,
    shell: settings.shell,
    records: recordsFor(sup.deps.store, `tasks:${sessionId}`),
    shellOptions: { program: cfg.shell.program, timeoutSecs: cfg.shell.timeout_secs, maxOutputChars: cfg.shell.max_output_chars },
    extra,
  });
}

export class SessionHost {
  readonly deps: SessionDeps;
  private readonly table: KindTable<SessionActor>;
  /**
   * Creation writes still in flight. A first turn's model call starts without waiting for its
   * creation to be durable; listings wait for these so a session is listed once its turn has begun.
   */
  private readonly creations = new Set<Promise<void>>();
  /** The module feeding turns from session inboxes (comms), once registered. */
  extension: SessionExtension | null = null;

  constructor(
    readonly sup: Supervisor,
    private readonly policy: SessionPolicy,
  ) {
    const deps: SessionDeps = {
      ...sup.deps,
      buildToolset: (id, settings) => sessionToolset(sup, deps.config(), id, settings),
      // Read through: the auth module installs its resolver on the runtime deps, possibly after this copy.
      get credentials() {
        return sup.deps.credentials;
      },
      get turnFeatures() {
        return sup.deps.turnFeatures;
      },
      get ledgerOutbox() {
        return sup.deps.ledgerOutbox;
      },
      get skills() {
        return sup.deps.skills;
      },
      get compactor() {
        return sup.deps.compactor;
      },
      get followUps() {
        return sup.deps.followUps;
      },
      get recorder() {
        return sup.deps.recorder;
      },
      get sessionMcp() {
        return sup.deps.sessionMcp;
      },
    };
    this.deps = deps;
    this.table = sup.registry.register<SessionActor>({
      kind: SESSION_KIND,
      machine: sessionMachine,
      policy,
      hydrate: (id) => this.hydrate(id),
      notFound: sessionNotFound,
      busy: (a) => a.isRunning(),
      evictable: (a) => a.subscriberCount === 0,
      shed: (a) => void a.shed(),
      stop: (a) => a.stop(),
      quiesce: async (a) => {
        a.interrupt();
        a.closeStreams('shutdown');
        await a.whenSettled();
      },
      describe: (a) => ({ state: a.stateValue(), labels: a.snapshotRecord.labels, sinceMs: a.stateSinceMs() }),
    });
  }

  get requests() {
    return this.sup.requests;
  }

  get capabilities() {
    return this.sup.capabilities;
  }

  get residentCount(): number {
    return this.table.residentCount;
  }

  noteCreation(write: Promise<void>): void {
    const tracked = write.then(
      () => undefined,
      () => undefined,
    );
    this.creations.add(tracked);
    tracked
      .then(() => this.creations.delete(tracked))
      .catch((err: unknown) => this.deps.log.error({ err }, 'session creation tracking failed'));
  }

  /** Resolves once every creation write started so far has settled. */
  async creationsSettled(): Promise<void> {
    if (this.creations.size) await Promise.all([...this.creations]);
  }

  /** Registers a freshly created session actor. */
  adopt(record: SessionRecord): SessionActor {
    return this.table.adopt(new SessionActor(record, 0, this.deps));
  }

  /** The live actor for a session (hydrated from storage if needed). Unknown → 404 SESSION_NOT_FOUND. */
  get(sessionId: string): Promise<SessionActor> {
    return this.table.get(sessionId);
  }

  /** Like get(), but an archived session is as unknown as a missing one (404 SESSION_NOT_FOUND). */
  async getActive(sessionId: string): Promise<SessionActor> {
    const actor = await this.table.get(sessionId);
    if (actor.snapshotRecord.archived) throw sessionNotFound(sessionId);
    return actor;
  }

  /**
   * Runs a command on a session through its mailbox (the actor registry's deliver()): the one path by
   * which HTTP commands, comms messages and ingress reach a session. Unknown → 404 SESSION_NOT_FOUND.
   */
  deliver<R>(sessionId: string, command: (actor: SessionActor) => Promise<R> | R): Promise<R> {
    return this.table.deliver(sessionId, command);
  }

  /** The resident actor, without hydrating. */
  peek(sessionId: string): SessionActor | undefined {
    return this.table.peek(sessionId);
  }

  /** Drops a session from the registry (after archive). */
  forget(sessionId: string): void {
    this.table.forget(sessionId);
  }

  private async hydrate(sessionId: string): Promise<SessionActor | undefined> {
    const { store } = this.deps;
    const record = await store.getSession(sessionId);
    if (!record) return undefined;
    // The session's own state is validated here (storage validated the record around it).
    if (!checkState.Check(record.state)) {
      throw new ServiceError('SESSION_STORE_ERROR', 'stored session state does not match its schema', { session_id: sessionId });
    }
    const lastSeq = store.persistent ? await store.lastLedgerSeq(sessionId) : 0;
    const { total } = await store.readRows(sessionId, 0, 0);
    const actor = new SessionActor(record, lastSeq, this.deps);
    // A transcript that disagrees with its committed record is quarantined, not served as if intact.
    const hold = total !== record.message_count ? 'evidence_quarantined' : null;
    if (hold)
      this.deps.log.error({ sessionId, rows: total, expected: record.message_count }, 'session transcript disagrees with its record');
    actor.recover(hold);
    return actor;
  }

  /** Measured session dimensions of GET /runtime/health: the number of bad resident sessions each. */
  health(): SessionHealth {
    let liveness = 0;
    let durability = 0;
    let runStart = 0;
    let loop = 0;
    const overdue = this.deps.now() - this.policy.overdueRunMs;
    for (const a of this.table.resident()) {
      const st = a.status().state;
      if (st === 'held') liveness++;
      if (a.ledgerHalted) durability++;
      if (a.isRunning() && a.lastUsedMs < overdue) runStart++;
      if (a.machineFailed()) loop++;
    }
    return { session_liveness: liveness, session_durability: durability, session_run_start: runStart, session_runtime_loop: loop };
  }
}
