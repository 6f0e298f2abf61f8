// actors/protocols/protocol-turns.ts: starts a Warren turn for a protocol binding (an OpenAI response,
// ...) and keeps its durable record: written with the turn's pending input (in_progress, with the
// session id and the seq of its first event), finished with the turn's own commit or failure write
// (TurnHooks, as detached turns do). The record is how a protocol id (resp_...) finds its session and
// its events again, on any node and after a restart; a record still in_progress from an earlier process
// means the turn never committed and reads as failed.
import { randomUUID } from 'node:crypto';
import type { TurnHooks } from '../session/session-actor.ts';
import { continueSession, createSession, CreatedWithTurnFailure, type TurnReply } from '../session/session-commands.ts';
import type { SessionHost } from '../session/session-host.ts';
import type { ContinueSessionRequest, CreateSessionRequest } from '../../contracts/session.ts';
import { isServiceError, ServiceError } from '../../contracts/errors.ts';
import type { Store } from '../../storage/store.ts';
import { TurnFeed } from './turn-feed.ts';
import { namespaceOf, PROTOCOL_TURN_KIND, PROTOCOL_TURN_REF_KIND, readRecord, readValidRecords } from '../../storage/record-kinds.ts';

const PROTOCOL_TURN_NS = 'protocol_turn';

type ProtocolTurnStatus = 'in_progress' | 'completed' | 'failed' | 'cancelled';

export interface ProtocolTurnRecord {
  v: 1;
  id: string;
  protocol: string;
  session_id: string;
  first_seq: number;
  status: ProtocolTurnStatus;
  boot: string;
  created_ms: number;
  finished_ms?: number;
  reply?: { text: string; turns: number; tool_calls: number; usage: unknown };
  error?: { code: string; message: string };
  /** Protocol-specific request fields echoed back on reads (model, instructions, previous id). */
  meta?: Record<string, unknown>;
}

export type TurnStart =
  /** `sessionId`: the new session's id, chosen by the caller (a LangGraph thread id). */
  | { kind: 'create'; body: CreateSessionRequest; sessionId?: string }
  | { kind: 'continue'; sessionId: string; body: ContinueSessionRequest };

export interface StartedTurn {
  record: ProtocolTurnRecord;
  /** Settles with the turn (its outcome is in the record too). */
  done: Promise<TurnReply>;
  /**
   * The turn's events from its first one, subscribed before any was published (so text deltas, which a
   * persistent ledger prunes at commit, are all there); undefined when the session was not local.
   * The caller stops it.
   */
  feed?: TurnFeed;
}

function errorOf(err: unknown): { code: string; message: string } {
  const cause = err instanceof CreatedWithTurnFailure ? err.cause : err;
  if (isServiceError(cause)) return { code: cause.code, message: cause.message };
  return { code: 'INTERNAL_ERROR', message: cause instanceof Error ? cause.message : String(cause) };
}

export class ProtocolTurns {
  readonly boot = randomUUID();

  constructor(
    private readonly sup: SessionHost,
    private readonly store: Store,
    private readonly now: () => number,
  ) {}

  /** Starts the turn; resolves once its pending input is durable, or rejects as the REST route would. */
  async start(protocol: string, id: string, start: TurnStart, meta?: Record<string, unknown>): Promise<StartedTurn> {
    const { sup } = this;
    let base: ProtocolTurnRecord | null = null;
    let feed: TurnFeed | undefined;
    let durable!: () => void;
    const pendingDurable = new Promise<void>((resolve) => (durable = resolve));
    const put = (r: ProtocolTurnRecord) => ({ op: 'putRecord' as const, ns: PROTOCOL_TURN_NS, key: r.id, value: r });
    const finish = (patch: Partial<ProtocolTurnRecord>): ProtocolTurnRecord => ({ ...base!, ...patch, finished_ms: this.now() });
    const hooks: TurnHooks = {
      pendingOps: (sessionId, firstSeq) => {
        base = {
          v: 1,
          id,
          protocol,
          session_id: sessionId,
          first_seq: firstSeq,
          status: 'in_progress',
          boot: this.boot,
          created_ms: this.now(),
          ...(meta ? { meta } : {}),
        };
        // Subscribed now, before the turn's first event (seq firstSeq) is published.
        const hub = sup.peek(sessionId)?.hub;
        if (hub) {
          feed = new TurnFeed(firstSeq - 1);
          feed.unsubscribe = hub.subscribe(feed);
          feed.endReplay();
        }
        // The session's own list of its protocol turns (A2A ListTasks reads a context's tasks from it).
        const ref = { v: 1, id, protocol, created_ms: base.created_ms };
        return [put(base), { op: 'putRecord', ns: namespaceOf(PROTOCOL_TURN_REF_KIND, sessionId), key: id, value: ref }];
      },
      onPendingDurable: () => durable(),
      commitOps: (o) => [
        put(finish({ status: 'completed', reply: { text: o.text, turns: o.turns, tool_calls: o.toolCalls, usage: o.usage } })),
      ],
      failOps: (err, cancelled) => [put(finish({ status: cancelled ? 'cancelled' : 'failed', error: errorOf(err) }))],
    };
    const handle = sup.requests.begin(id);
    const run =
      start.kind === 'create'
        ? createSession(sup, start.body, {
            requestId: id,
            signal: handle.signal,
            onCommitting: handle.markCommitting,
            hooks,
            ...(start.sessionId ? { sessionId: start.sessionId } : {}),
          })
        : continueSession(sup, start.sessionId, start.body, {
            requestId: id,
            signal: handle.signal,
            onCommitting: handle.markCommitting,
            hooks,
          });
    const done = run.finally(() => handle.finish());
    done.catch(() => {});
    const early = await Promise.race([
      pendingDurable.then(() => null),
      done.then(
        () => null,
        (err: unknown) => ({ err }),
      ),
    ]);
    const record: ProtocolTurnRecord | null = base;
    if (!record) {
      (feed as TurnFeed | undefined)?.stop();
      const err = early?.err;
      throw (err instanceof CreatedWithTurnFailure ? err.cause : err) ?? new ServiceError('INTERNAL_ERROR', 'turn ended without a record');
    }
    return { record, done, ...(feed ? { feed } : {}) };
  }

  /** Cancels a running turn started on this node (REQUEST registry); false when it already ended. */
  cancel(id: string): boolean {
    return this.sup.requests.cancel(id).cancelled;
  }

  /** The record of `id` for `protocol`, settled truthfully after a restart; 404 NOT_FOUND when unknown. */
  async get(protocol: string, id: string): Promise<ProtocolTurnRecord> {
    const rec = await readRecord<ProtocolTurnRecord>(this.store, PROTOCOL_TURN_KIND, id);
    if (!rec || rec.protocol !== protocol) throw new ServiceError('NOT_FOUND', `not found: ${id}`, { id });
    if (rec.status === 'in_progress' && rec.boot !== this.boot) {
      return {
        ...rec,
        status: 'failed',
        error: { code: 'SESSION_ERROR', message: 'the turn was interrupted by a restart before it committed' },
      };
    }
    return rec;
  }

  /** The records of `protocol` turns in one session (any order), each settled as get() settles it. */
  async listForSession(protocol: string, sessionId: string): Promise<ProtocolTurnRecord[]> {
    const refs = await readValidRecords<{ id: string; protocol: string }>(this.store, PROTOCOL_TURN_REF_KIND, sessionId);
    const recs = await Promise.all(
      refs.filter((r) => r.value.protocol === protocol).map((r) => this.get(protocol, r.value.id).catch(() => undefined)),
    );
    return recs.filter((r): r is ProtocolTurnRecord => r !== undefined && r.session_id === sessionId);
  }
}

/** The session a protocol turn record (any protocol) belongs to, or undefined (cluster routing by protocol id). */
export async function protocolTurnSession(store: Store, id: string): Promise<string | undefined> {
  const rec = await readRecord<ProtocolTurnRecord>(store, PROTOCOL_TURN_KIND, id);
  return typeof rec?.session_id === 'string' ? rec.session_id : undefined;
}
