// actors/webhooks/webhook-service.ts: signed outbound webhooks. As the runtime's LedgerOutbox it turns
// the ledger entries a subscription wants into outbox records committed in the same store transaction
// as the entries (actors/session/session-writer.ts), then hands them to the dispatcher once durable. At startup
// it reloads every pending record. The /webhooks handlers call it.
import type { OutboundGuard } from '../net/outbound-guard.ts';
import type { RealmCipher } from '../auth/realm-key.ts';
import type { Logger } from 'pino';
import type { Config } from '../../contracts/config.ts';
import { ServiceError } from '../../contracts/errors.ts';
import type { DeliveryRecord, DeliveryStatus, WebhookCreateRequest } from '../../contracts/webhooks.ts';
import type { LedgerEntry, Store, StoreOp } from '../../storage/store.ts';
import type { LedgerOutbox } from '../session/session-writer.ts';
import { DELIVERY_NS_PREFIX, deliveryKey, WebhookDispatcher, type DeliveryTuning } from './webhook-dispatcher.ts';
import { deliveryId, WebhookSubscriptions, type Subscription } from './webhook-subscriptions.ts';
import { readRecords, WEBHOOK_DELIVERY_KIND } from '../../storage/record-kinds.ts';

export interface WebhookServiceDeps {
  store: Store;
  log: Logger;
  config(): Config;
  now(): number;
  env: NodeJS.ProcessEnv;
  /** Deliveries connect through it ([network] rules after DNS); absent: plain fetch (unit tests). */
  outbound?: OutboundGuard;
  /** Seals stored signing secrets (the realm key); absent: stored as given (unit tests). */
  cipher?: () => Promise<RealmCipher>;
}

function tuningOf(cfg: Config): DeliveryTuning {
  const x = cfg.extensions ?? {};
  return {
    maxAttempts: x.webhook_max_attempts ?? 8,
    initialBackoffMs: x.webhook_initial_backoff_ms ?? 1000,
    maxBackoffMs: x.webhook_max_backoff_ms ?? 300_000,
    timeoutMs: x.webhook_timeout_ms ?? 10_000,
    concurrency: x.webhook_concurrency ?? 16,
  };
}

export class WebhookService implements LedgerOutbox {
  readonly subscriptions: WebhookSubscriptions;
  readonly dispatcher: WebhookDispatcher;
  readonly ready: Promise<void>;

  constructor(private readonly deps: WebhookServiceDeps) {
    this.subscriptions = new WebhookSubscriptions(deps.store, deps.config, deps.now, deps.cipher);
    this.dispatcher = new WebhookDispatcher({
      store: deps.store,
      log: deps.log,
      now: deps.now,
      env: deps.env,
      fetch: deps.outbound?.fetch,
      tuning: () => tuningOf(deps.config()),
      subscription: (id) => this.subscriptions.get(id),
    });
    this.ready = this.load();
    this.ready.catch((err: unknown) => deps.log.error({ err }, 'webhook outbox could not be loaded'));
  }

  private async load(): Promise<void> {
    await this.subscriptions.load();
    for (const sub of this.subscriptions.all()) {
      const rows = await readRecords<DeliveryRecord>(this.deps.store, WEBHOOK_DELIVERY_KIND, sub.id);
      this.dispatcher.enqueue(rows.map((r) => r.value).filter((r) => r.status === 'pending'));
    }
  }

  opsFor(session: { id: string; labels: Record<string, string> }, entries: readonly LedgerEntry[]): StoreOp[] {
    if (!this.subscriptions.any) return [];
    const ops: StoreOp[] = [];
    for (const e of entries) {
      const subs = this.subscriptions.matching(e.kind, session.labels);
      if (subs.length === 0) continue;
      const body = JSON.stringify({
        type: e.kind,
        timestamp: new Date(e.timestamp_ms).toISOString(),
        data: {
          session_id: session.id,
          seq: e.seq,
          ...(Object.keys(session.labels).length ? { labels: session.labels } : {}),
          payload: e.payload,
        },
      });
      for (const sub of subs) ops.push(this.recordOp(sub, session.id, e, body));
    }
    return ops;
  }

  private recordOp(sub: Subscription, sessionId: string, e: LedgerEntry, body: string): StoreOp {
    const now = this.deps.now();
    const value: DeliveryRecord = {
      v: 1,
      id: deliveryId(sub.id, sessionId, e.seq),
      subscription_id: sub.id,
      session_id: sessionId,
      seq: e.seq,
      event: e.kind,
      body,
      status: 'pending',
      attempts: 0,
      created_ms: now,
      next_attempt_ms: now,
    };
    return { op: 'putRecord', ns: DELIVERY_NS_PREFIX + sub.id, key: deliveryKey(sessionId, e.seq), value };
  }

  committed(ops: StoreOp[]): void {
    const records: DeliveryRecord[] = [];
    for (const op of ops) if (op.op === 'putRecord') records.push(op.value as DeliveryRecord);
    this.dispatcher.enqueue(records);
  }

  async create(body: WebhookCreateRequest): Promise<Subscription> {
    await this.ready;
    const refused = this.deps.outbound ? await this.deps.outbound.checkUrl(body.url) : null;
    if (refused !== null) throw new ServiceError('BAD_REQUEST', `webhook url refused: ${refused}`);
    return this.subscriptions.create(body);
  }

  async delete(id: string): Promise<void> {
    await this.ready;
    await this.subscriptions.delete(id);
    this.dispatcher.dropSubscription(id);
  }

  /** The outbox entries of one subscription, oldest first (by creation, then session and seq). */
  async deliveries(
    id: string,
    filter: { status?: DeliveryStatus; offset: number; limit: number },
  ): Promise<{ records: DeliveryRecord[]; hasMore: boolean }> {
    await this.ready;
    if (!this.subscriptions.get(id)) throw new ServiceError('NOT_FOUND', `webhook subscription not found: ${id}`, { id });
    const rows = await readRecords<DeliveryRecord>(this.deps.store, WEBHOOK_DELIVERY_KIND, id);
    const all = rows.map((r) => r.value).filter((r) => !filter.status || r.status === filter.status);
    all.sort((a, b) => a.created_ms - b.created_ms || (a.session_id < b.session_id ? -1 : a.session_id > b.session_id ? 1 : a.seq - b.seq));
    const page = all.slice(filter.offset, filter.offset + filter.limit);
    return { records: page, hasMore: filter.offset + page.length < all.length };
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }
}
