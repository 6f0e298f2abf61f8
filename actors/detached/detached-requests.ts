// actors/detached/detached-requests.ts: the durable records of detached turns. The record is written
// with the turn's pending input (running), and its terminal state rides the turn's own commit or failure
// write (actors/session/session-actor.ts TurnHooks), so after kill -9 a record still `running` from an earlier
// process means the turn never committed: it is reported failed. Terminal records expire after a TTL.
import { randomUUID } from 'node:crypto';
import type { DetachedRecord } from '../../contracts/detached.ts';
import { ServiceError } from '../../contracts/errors.ts';
import type { Store, StoreOp } from '../../storage/store.ts';
import { DETACHED_KIND, readRecord } from '../../storage/record-kinds.ts';

const DETACHED_NS = 'detached_request';

export class DetachedRequests {
  /** This process's boot id. */
  readonly boot = randomUUID();

  constructor(
    private readonly store: Store,
    private readonly now: () => number,
    private readonly ttlMs: () => number,
  ) {}

  putOp(record: DetachedRecord): StoreOp {
    return { op: 'putRecord', ns: DETACHED_NS, key: record.request_id, value: record };
  }

  fresh(requestId: string, sessionId: string, kind: DetachedRecord['kind'], firstSeq: number): DetachedRecord {
    return {
      v: 1,
      request_id: requestId,
      session_id: sessionId,
      kind,
      status: 'running',
      boot: this.boot,
      created_ms: this.now(),
      first_seq: firstSeq,
    };
  }

  finished(base: DetachedRecord, patch: Partial<DetachedRecord>): DetachedRecord {
    return { ...base, ...patch, finished_ms: this.now() };
  }

  /** The record, settled truthfully (cut off by a restart → failed) and expired after the TTL (404 with reason). */
  async get(requestId: string): Promise<DetachedRecord> {
    let rec = await readRecord<DetachedRecord>(this.store, DETACHED_KIND, requestId);
    if (!rec) throw new ServiceError('NOT_FOUND', `Request not found: ${requestId}`, { request_id: requestId });
    // A queued record is a follow-up in a session's durable queue (actors/busy): it survives restarts.
    if (rec.status === 'running' && rec.boot !== this.boot) {
      rec = this.finished(rec, {
        status: 'failed',
        error: {
          status: 500,
          body: {
            error: 'the turn was interrupted by a restart before it committed',
            code: 'SESSION_ERROR',
            details: { session_id: rec.session_id, reason: 'interrupted_by_restart' },
          },
        },
      });
      await this.store.commit([this.putOp(rec)]);
    }
    if (rec.status === 'expired' || (rec.finished_ms !== undefined && this.now() >= rec.finished_ms + this.ttlMs())) {
      if (rec.status !== 'expired') {
        await this.store.commit([
          this.putOp({
            v: 1,
            request_id: rec.request_id,
            session_id: rec.session_id,
            kind: rec.kind,
            status: 'expired',
            boot: rec.boot,
            created_ms: rec.created_ms,
            finished_ms: rec.finished_ms,
          }),
        ]);
      }
      throw new ServiceError('NOT_FOUND', `the result of request ${requestId} expired`, { request_id: requestId, reason: 'expired' });
    }
    return rec;
  }

  /** The seq of the turn's first event (for GET /sessions/{id}/events?request_id=). */
  async firstSeq(requestId: string, sessionId: string, queuedTail?: () => Promise<number>): Promise<number> {
    const rec = await readRecord<DetachedRecord>(this.store, DETACHED_KIND, requestId);
    // A queued follow-up (actors/busy) has not started: every later event precedes or belongs to its turn.
    if (rec && rec.session_id === sessionId && rec.status === 'queued' && queuedTail) return queuedTail();
    if (!rec || rec.session_id !== sessionId || rec.first_seq === undefined) {
      throw new ServiceError('BAD_REQUEST', `no detached request ${requestId} on session ${sessionId}`, { request_id: requestId });
    }
    return rec.first_seq;
  }
}
