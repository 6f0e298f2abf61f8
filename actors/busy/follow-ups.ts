// actors/busy/follow-ups.ts: busy policies. A continue with `busy_policy: enqueue` becomes a durable
// follow-up in its session's queue (a store record written before it is acknowledged) and runs, in
// order, after the current turn; `steer` waits for the running turn's next model call, where it is
// injected as a user message, and is answered with that turn's result (a turn that ends first leaves it
// to run as the next turn). The session machine mirrors the queue (context.queued / steering, state
// `draining`); this file owns the items and drives them. A follow-up's record leaves the queue in the
// same write as its turn's pending input, so from then on the usual durable-resume rules apply.
import type { Logger } from 'pino';
import { BUSY_QUEUE_NS, queueKey, type QueuedTurnRecord } from '../../contracts/busy.ts';
import { durableResumeHold, isServiceError, ServiceError } from '../../contracts/errors.ts';
import type { ContinueSessionRequest } from '../../contracts/session.ts';
import type { ContentInput } from '../../contracts/transcript.ts';
import type { TurnOutcome } from '../../machines/session-machine.ts';
import type { StoreOp } from '../../storage/store.ts';
import type { RequestHandle } from '../request-registry.ts';
import type { TurnHooks } from '../session/session-actor.ts';
import { continueSession, type TurnReply } from '../session/session-commands.ts';
import type { SessionHost } from '../session/session-host.ts';
import type { FollowUpPort } from './busy-port.ts';
import { QUEUED_TURN_KIND, readRecords } from '../../storage/record-kinds.ts';

/** How a detached (Prefer: respond-async) busy request keeps its GET /requests/{id} record (http layer). */
export interface DetachedAnswers {
  /** The request record while the follow-up waits in the queue (status queued). */
  queuedOps(requestId: string, sessionId: string): StoreOp[];
  /** Hooks that keep the record as the follow-up's own turn runs, as for any detached turn. */
  hooks(requestId: string): TurnHooks;
  /** Settles a request that has no turn of its own: steering answered by the running turn, a dropped or refused follow-up. */
  settleOps(requestId: string, sessionId: string, result: { reply: TurnReply } | { error: unknown; cancelled: boolean }): StoreOp[];
}

export interface FollowUpOptions {
  log: Logger;
  now(): number;
  /** extensions.max_queued_turns: follow-ups plus waiting steering inputs per session. */
  maxQueued(): number;
  detached: DetachedAnswers;
}

type ItemState = 'waiting' | 'starting' | 'injected' | 'done';

interface Item {
  rec: QueuedTurnRecord;
  state: ItemState;
  handle: RequestHandle;
  resolve(reply: TurnReply): void;
  reject(err: unknown): void;
}

interface SessionQueue {
  /** Follow-up turns, in order. */
  follow: Item[];
  /** Steering inputs waiting for the running turn's next model call. */
  steering: Item[];
  /** Steering taken by the running turn (answered when it ends). */
  injected: Item[];
  driving: boolean;
}

/** An accepted busy request: durable; `result` settles with its turn's reply (or error). */
export interface Accepted {
  result: Promise<TurnReply>;
}

const del = (rec: QueuedTurnRecord): StoreOp => ({ op: 'deleteRecord', ns: BUSY_QUEUE_NS, key: queueKey(rec.session_id, rec.seq) });

export class FollowUps implements FollowUpPort {
  private readonly queues = new Map<string, SessionQueue>();
  private seq = 0;

  constructor(
    private readonly host: SessionHost,
    private readonly opts: FollowUpOptions,
  ) {}

  private queue(sessionId: string): SessionQueue {
    let q = this.queues.get(sessionId);
    if (!q) this.queues.set(sessionId, (q = { follow: [], steering: [], injected: [], driving: false }));
    return q;
  }

  /** Accepts a continue under `enqueue` or `steer`; resolves once its queue record is durable. */
  async submit(
    sessionId: string,
    body: ContinueSessionRequest,
    requestId: string,
    policy: 'enqueue' | 'steer',
    detached: boolean,
  ): Promise<Accepted> {
    if (body.session_id !== sessionId)
      throw new ServiceError('BAD_REQUEST', `Session ID mismatch: path=${sessionId} body=${body.session_id}`);
    const actor = await this.host.getActive(sessionId);
    const st = actor.status();
    if (st.hold) throw durableResumeHold(sessionId, st.hold);
    const q = this.queue(sessionId);
    const max = this.opts.maxQueued();
    if (q.follow.length + q.steering.length >= max) {
      throw new ServiceError('SERVICE_UNAVAILABLE', `the follow-up queue of session ${sessionId} is full (${max} waiting)`, {
        session_id: sessionId,
        reason: 'queue_full',
        max_queued_turns: max,
      });
    }
    const handle = this.host.requests.begin(requestId);
    const rec: QueuedTurnRecord = {
      v: 1,
      session_id: sessionId,
      seq: ++this.seq,
      request_id: requestId,
      policy,
      detached,
      created_ms: this.opts.now(),
      body,
    };
    let resolve!: (r: TurnReply) => void;
    let reject!: (e: unknown) => void;
    const result = new Promise<TurnReply>((res, rej) => ((resolve = res), (reject = rej)));
    result.catch(() => {});
    const item: Item = { rec, state: 'waiting', handle, resolve, reject };
    // Steering can reach the running turn only before its commit; otherwise it is a follow-up.
    const steerNow = policy === 'steer' && st.state === 'running' && (st.phase === 'calling_model' || st.phase === 'executing_tools');
    (steerNow ? q.steering : q.follow).push(item);
    actor.machine.send({ type: steerNow ? 'steer.requested' : 'followup.enqueued' });
    // Cancellable from now on (also while its record is being written).
    handle.signal.addEventListener('abort', () => void this.cancelWaiting(sessionId, item, handle.signal.reason), { once: true });
    try {
      await actor.persist([
        { op: 'putRecord', ns: BUSY_QUEUE_NS, key: queueKey(sessionId, rec.seq), value: rec },
        ...(detached ? this.opts.detached.queuedOps(requestId, sessionId) : []),
      ]);
    } catch (err) {
      this.remove(q, item);
      handle.finish();
      this.kick(sessionId);
      throw err;
    }
    this.kick(sessionId);
    return { result };
  }

  /** Resumes the queues stored before a restart (each record read through its schema). */
  async resumeStored(): Promise<void> {
    await this.resume((await readRecords<QueuedTurnRecord>(this.host.deps.store, QUEUED_TURN_KIND)).map((r) => r.value));
  }

  /** Resumes the durable queues found at startup, in order per session. */
  async resume(records: QueuedTurnRecord[]): Promise<void> {
    records.sort((a, b) => a.seq - b.seq);
    for (const rec of records) {
      this.seq = Math.max(this.seq, rec.seq);
      let handle: RequestHandle;
      try {
        handle = this.host.requests.begin(rec.request_id);
      } catch {
        continue;
      }
      const item: Item = { rec, state: 'waiting', handle, resolve: () => {}, reject: () => {} };
      this.queue(rec.session_id).follow.push(item);
      handle.signal.addEventListener('abort', () => void this.cancelWaiting(rec.session_id, item, handle.signal.reason), { once: true });
    }
    for (const sessionId of this.queues.keys()) this.kick(sessionId);
  }

  // FollowUpPort: every running turn of every session passes here.
  pullSteer(sessionId: string): ContentInput[] {
    const q = this.queues.get(sessionId);
    if (!q || q.steering.length === 0) return [];
    const taken = q.steering.splice(0);
    for (const item of taken) item.state = 'injected';
    q.injected.push(...taken);
    this.host.peek(sessionId)?.machine.send({ type: 'steer.injected' });
    return taken.map((item) => item.rec.body.prompt);
  }

  commitOps(sessionId: string, outcome: TurnOutcome): StoreOp[] {
    const q = this.queues.get(sessionId);
    if (!q || q.injected.length === 0) return [];
    return q.injected.flatMap((item) => [
      del(item.rec),
      ...(item.rec.detached ? this.opts.detached.settleOps(item.rec.request_id, sessionId, { reply: { sessionId, ...outcome } }) : []),
    ]);
  }

  turnEnded(sessionId: string, result: { outcome: TurnOutcome } | { error: unknown }): void {
    const q = this.queues.get(sessionId);
    if (!q) return;
    const answered = q.injected.splice(0);
    if (answered.length) {
      // Steering answered by a failed turn leaves the queue with the failure (its turn never committed).
      if ('error' in result)
        this.writeDetached(
          sessionId,
          answered.flatMap((i) => [del(i.rec), ...this.settle(i, { error: result.error, cancelled: isCancel(result.error) })]),
        );
      for (const item of answered)
        this.finish(item, 'outcome' in result ? { reply: { sessionId, ...result.outcome } } : { error: result.error });
    }
    // Steering the turn never reached runs as the next turn (the machine counts it as follow-ups too).
    if (q.steering.length) {
      const late = q.steering.splice(0);
      for (const item of late) item.state = 'waiting';
      q.follow.unshift(...late);
    }
    // The driver runs the next follow-up, or brings the machine's counts back to the queue's (idle).
    this.kick(sessionId);
  }

  /** Archive: every waiting follow-up and steering input is dropped (answered cancelled). */
  drop(sessionId: string): void {
    const q = this.queues.get(sessionId);
    if (!q) return;
    const dropped = [...q.follow.filter((i) => i.state === 'waiting'), ...q.steering];
    q.follow = q.follow.filter((i) => i.state !== 'waiting');
    q.steering = [];
    const err = new ServiceError('REQUEST_CANCELLED', 'the session was archived before this follow-up ran', {
      session_id: sessionId,
      reason: 'session_archived',
    });
    this.writeDetached(
      sessionId,
      dropped.flatMap((i) => [del(i.rec), ...this.settle(i, { error: err, cancelled: true })]),
    );
    for (const item of dropped) this.finish(item, { error: err });
    this.host.peek(sessionId)?.machine.send({ type: 'queue.dropped' });
  }

  private kick(sessionId: string): void {
    void this.drive(sessionId).catch((err: unknown) => this.opts.log.error({ err, sessionId }, 'follow-up queue stopped'));
  }

  /** Runs the session's follow-ups one after another, each once the session is at rest. */
  private async drive(sessionId: string): Promise<void> {
    const q = this.queue(sessionId);
    if (q.driving) return;
    q.driving = true;
    try {
      for (;;) {
        let actor;
        try {
          actor = await this.host.getActive(sessionId);
        } catch (err) {
          // Shutting down: the records stay for the next start. Archived or gone: the queue goes.
          if (!(isServiceError(err) && err.code === 'SERVICE_UNAVAILABLE')) this.drop(sessionId);
          return;
        }
        await actor.whenSettled();
        const next = q.follow[0];
        // The machine mirrors the queue; syncing it here also heals a count that drifted (a cancelled item).
        if (!actor.isRunning()) actor.machine.send({ type: 'queue.synced', count: q.follow.length });
        if (!next) return;
        if ((await this.run(sessionId, next)) === 'stop') return this.shutDown(q);
      }
    } finally {
      q.driving = false;
      if (q.follow.length === 0 && q.steering.length === 0 && q.injected.length === 0) this.queues.delete(sessionId);
    }
  }

  /** Runs one follow-up as a continue; 'again' when the session was busy at admission. */
  private async run(sessionId: string, item: Item): Promise<'next' | 'again' | 'stop'> {
    const q = this.queue(sessionId);
    const { rec } = item;
    const dh = rec.detached ? this.opts.detached.hooks(rec.request_id) : undefined;
    const hooks: TurnHooks = {
      ...dh,
      // The follow-up leaves the queue in the same write as its turn's pending input.
      pendingOps: (sid, firstSeq) => [del(rec), ...(dh?.pendingOps?.(sid, firstSeq) ?? [])],
    };
    let admitted = false;
    item.state = 'starting';
    try {
      const reply = await continueSession(this.host, sessionId, rec.body, {
        requestId: rec.request_id,
        signal: item.handle.signal,
        onCommitting: item.handle.markCommitting,
        hooks,
        followUp: true,
        onAdmitted: () => {
          admitted = true;
          this.remove(q, item);
        },
      });
      this.finish(item, { reply });
      return 'next';
    } catch (err) {
      if (admitted) {
        this.finish(item, { error: err });
        return 'next';
      }
      item.state = 'waiting';
      if (isServiceError(err) && err.code === 'SESSION_BUSY') return 'again';
      if (isServiceError(err) && err.code === 'SERVICE_UNAVAILABLE') return 'stop';
      // Refused before it ran (bad input found late, a held session): it leaves the queue with that error.
      this.remove(q, item);
      this.host.peek(sessionId)?.machine.send({ type: 'followup.discarded' });
      await this.write(sessionId, [del(rec), ...this.settle(item, { error: err, cancelled: isCancel(err) })]);
      this.finish(item, { error: err });
      return 'next';
    }
  }

  /** Shutdown: waiting callers are answered 503; the records stay and run at the next start. */
  private shutDown(q: SessionQueue): void {
    const err = new ServiceError('SERVICE_UNAVAILABLE', 'server is shutting down; the follow-up stays queued and runs at the next start');
    for (const item of [...q.follow, ...q.steering]) this.finish(item, { error: err });
  }

  /** A waiting item cancelled by POST /requests/{id}/cancel leaves the queue (its turn never started). */
  private async cancelWaiting(sessionId: string, item: Item, reason: unknown): Promise<void> {
    const q = this.queues.get(sessionId);
    if (!q || item.state !== 'waiting') return;
    this.remove(q, item);
    this.host.peek(sessionId)?.machine.send({ type: 'followup.discarded' });
    const err = isServiceError(reason) ? reason : new ServiceError('REQUEST_CANCELLED', 'request cancelled', { session_id: sessionId });
    await this.write(sessionId, [del(item.rec), ...this.settle(item, { error: err, cancelled: true })]);
    this.finish(item, { error: err });
    this.kick(sessionId);
  }

  private remove(q: SessionQueue, item: Item): void {
    q.follow = q.follow.filter((i) => i !== item);
    q.steering = q.steering.filter((i) => i !== item);
  }

  private settle(item: Item, result: { error: unknown; cancelled: boolean }): StoreOp[] {
    return item.rec.detached ? this.opts.detached.settleOps(item.rec.request_id, item.rec.session_id, result) : [];
  }

  private finish(item: Item, result: { reply: TurnReply } | { error: unknown }): void {
    if (item.state === 'done') return;
    item.state = 'done';
    item.handle.finish();
    if ('reply' in result) item.resolve(result.reply);
    else item.reject(result.error);
  }

  /** write() that nobody waits for. */
  private writeDetached(sessionId: string, ops: StoreOp[]): void {
    this.write(sessionId, ops).catch(() => undefined); // never rejects: write() logs its own failure
  }

  /** Writes queue bookkeeping through the session's writer (ordered with its turn writes); a failure is logged here, never thrown. */
  private write(sessionId: string, ops: StoreOp[]): Promise<void> {
    if (ops.length === 0) return Promise.resolve();
    const actor = this.host.peek(sessionId);
    const done = actor ? actor.persist(ops) : this.host.deps.store.commit(ops);
    return done.catch((err: unknown) => this.opts.log.error({ err, sessionId }, 'follow-up queue write failed'));
  }
}

const isCancel = (err: unknown): boolean => isServiceError(err) && err.code === 'REQUEST_CANCELLED';
