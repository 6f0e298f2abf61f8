// actors/webhooks/webhook-dispatcher.ts: delivers outbox entries. One lane per (subscription, session):
// a lane sends its oldest pending entry and nothing after it until that one is delivered or dead, so
// deliveries are ordered per session. Failures retry with exponential backoff and jitter; after
// `maxAttempts` an entry is dead-lettered. Each attempt's outcome is written back to its record.
// At least once: a crash between a 2xx and the status write re-sends the same `webhook-id`.
import { failureReason } from '../net/outbound-guard.ts';
import type { Logger } from 'pino';
import { Webhook } from 'standardwebhooks';
import type { DeliveryRecord } from '../../contracts/webhooks.ts';
import type { Store } from '../../storage/store.ts';
import type { Subscription } from './webhook-subscriptions.ts';

export const DELIVERY_NS_PREFIX = 'webhook_delivery:';

export interface DeliveryTuning {
  maxAttempts: number;
  initialBackoffMs: number;
  maxBackoffMs: number;
  timeoutMs: number;
  concurrency: number;
}

export interface DispatcherDeps {
  store: Store;
  log: Logger;
  now(): number;
  env: NodeJS.ProcessEnv;
  /** The guarded fetch (actors/net/outbound-guard.ts); default: the global one. */
  fetch?: typeof fetch;
  tuning(): DeliveryTuning;
  subscription(id: string): Subscription | undefined;
  random?(): number;
}

export function deliveryKey(sessionId: string, seq: number): string {
  return `${sessionId}:${String(seq).padStart(12, '0')}`;
}

export class WebhookDispatcher {
  private readonly lanes = new Map<string, DeliveryRecord[]>();
  private readonly known = new Set<string>();
  private readonly busy = new Set<string>();
  private inFlight = 0;
  private timer: NodeJS.Timeout | null = null;
  private timerDue = Infinity;
  private readonly abort = new AbortController();
  private closed = false;
  private readonly settledWaiters = new Set<() => void>();

  constructor(private readonly deps: DispatcherDeps) {}

  /** Entries waiting for delivery (every lane). */
  get pendingCount(): number {
    return this.known.size;
  }

  /** Adds pending entries (new commits, or the outbox read at startup); duplicates are ignored. */
  enqueue(records: readonly DeliveryRecord[]): void {
    for (const r of records) {
      if (r.status !== 'pending' || this.known.has(r.id)) continue;
      this.known.add(r.id);
      const lane = `${r.subscription_id}\u0000${r.session_id}`;
      const list = this.lanes.get(lane);
      if (!list) this.lanes.set(lane, [r]);
      else {
        list.push(r);
        if (list.length > 1 && list[list.length - 2].seq > r.seq) list.sort((a, b) => a.seq - b.seq);
      }
    }
    this.pump();
  }

  /** Drops the lanes of a removed subscription (its records stay as they are). */
  dropSubscription(id: string): void {
    for (const [lane, list] of this.lanes) {
      if (!lane.startsWith(`${id}\u0000`)) continue;
      for (const r of list) this.known.delete(r.id);
      this.lanes.delete(lane);
    }
  }

  /** Resolves once nothing is pending (tests and shutdown diagnostics). */
  idle(): Promise<void> {
    if (this.known.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.settledWaiters.add(resolve));
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.abort.abort();
  }

  private pump(): void {
    if (this.closed) return;
    const { concurrency } = this.deps.tuning();
    const now = this.deps.now();
    let nextDue = Infinity;
    for (const [lane, list] of this.lanes) {
      if (this.inFlight >= concurrency) break;
      if (this.busy.has(lane)) continue;
      const head = list[0];
      if (head.next_attempt_ms > now) {
        nextDue = Math.min(nextDue, head.next_attempt_ms);
        continue;
      }
      this.busy.add(lane);
      this.inFlight++;
      this.attempt(lane, head).catch((err: unknown) =>
        this.deps.log.error({ err, webhookId: head.id }, 'webhook delivery bookkeeping failed'),
      );
    }
    if (nextDue < Infinity && nextDue < this.timerDue) {
      if (this.timer) clearTimeout(this.timer);
      this.timerDue = nextDue;
      this.timer = setTimeout(
        () => {
          this.timer = null;
          this.timerDue = Infinity;
          this.pump();
        },
        Math.max(0, nextDue - now),
      );
      this.timer.unref();
    }
  }

  private async attempt(lane: string, rec: DeliveryRecord): Promise<void> {
    const tuning = this.deps.tuning();
    const outcome = await this.send(rec, tuning.timeoutMs);
    const now = this.deps.now();
    const next: DeliveryRecord = { ...rec, attempts: rec.attempts + 1 };
    if (outcome.statusCode !== undefined) next.last_status_code = outcome.statusCode;
    if (outcome.ok) {
      next.status = 'delivered';
      next.delivered_ms = now;
      delete next.last_error;
    } else {
      next.last_error = outcome.error;
      if (next.attempts >= tuning.maxAttempts) next.status = 'dead';
      else next.next_attempt_ms = now + backoff(next.attempts, tuning, this.deps.random ?? Math.random);
    }
    if (this.closed) return;
    try {
      await this.deps.store.commit([
        { op: 'putRecord', ns: DELIVERY_NS_PREFIX + rec.subscription_id, key: deliveryKey(rec.session_id, rec.seq), value: next },
      ]);
    } catch (err) {
      // The attempt is not recorded: the entry stays at the head and is tried again (at least once).
      this.deps.log.error({ err, webhookId: rec.id }, 'webhook delivery status write failed');
      next.status = 'pending';
      next.next_attempt_ms = now + tuning.initialBackoffMs;
    }
    if (next.status === 'dead')
      this.deps.log.warn(
        { webhookId: rec.id, subscription: rec.subscription_id, attempts: next.attempts },
        'webhook delivery dead-lettered',
      );
    const list = this.lanes.get(lane);
    this.busy.delete(lane);
    this.inFlight--;
    if (list && list[0]?.id === rec.id) {
      if (next.status === 'pending') list[0] = next;
      else {
        list.shift();
        this.known.delete(rec.id);
        if (list.length === 0) this.lanes.delete(lane);
      }
    }
    if (this.known.size === 0) {
      for (const w of this.settledWaiters) w();
      this.settledWaiters.clear();
    }
    this.pump();
  }

  /** One signed POST. Never throws; never logs or returns the secret. */
  private async send(rec: DeliveryRecord, timeoutMs: number): Promise<{ ok: boolean; statusCode?: number; error?: string }> {
    const sub = this.deps.subscription(rec.subscription_id);
    if (!sub) return { ok: false, error: 'subscription removed' };
    const secret = sub.secret ?? (sub.secretEnv ? this.deps.env[sub.secretEnv] : undefined);
    if (!secret) return { ok: false, error: `secret unavailable: environment variable ${sub.secretEnv ?? '?'} is not set` };
    let signature: string;
    const at = new Date(this.deps.now());
    try {
      signature = new Webhook(secret).sign(rec.id, at, rec.body);
    } catch {
      return { ok: false, error: 'secret is not a valid Standard Webhooks secret (base64, optional whsec_ prefix)' };
    }
    const signal = AbortSignal.any([this.abort.signal, AbortSignal.timeout(timeoutMs)]);
    try {
      const res = await (this.deps.fetch ?? fetch)(sub.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Warren-Webhooks/1',
          'webhook-id': rec.id,
          'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
          'webhook-signature': signature,
        },
        body: rec.body,
        signal,
        redirect: 'manual',
      });
      await res.arrayBuffer().catch(() => undefined);
      if (res.status >= 200 && res.status < 300) return { ok: true, statusCode: res.status };
      return { ok: false, statusCode: res.status, error: `receiver answered ${res.status}` };
    } catch (err) {
      const timedOut = signal.aborted && !this.abort.signal.aborted;
      return {
        ok: false,
        error: timedOut ? `timed out after ${timeoutMs} ms` : `request failed: ${failureReason(err)}`,
      };
    }
  }
}

/** Exponential backoff with jitter: uniform in [base/2, base], base = initial * 2^(attempt-1), capped. */
function backoff(attempts: number, t: Pick<DeliveryTuning, 'initialBackoffMs' | 'maxBackoffMs'>, random: () => number): number {
  const base = Math.min(t.maxBackoffMs, t.initialBackoffMs * 2 ** Math.min(30, attempts - 1));
  return Math.round(base / 2 + (random() * base) / 2);
}
