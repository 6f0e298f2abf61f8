// actors/webhooks/webhook-subscriptions.ts: the webhook subscriptions of a realm: `[[webhooks]]` from
// config (read live, so PUT /config applies at once) and API-created ones (store records). Answers, for
// a session's ledger entries, which subscriptions want them. Secrets stay here and in the dispatcher.
import { createHash, randomUUID } from 'node:crypto';
import type { Config } from '../../contracts/config.ts';
import { DEFAULT_WEBHOOK_EVENTS, type WebhookCreateRequest, type WebhookView } from '../../contracts/webhooks.ts';
import { ServiceError } from '../../contracts/errors.ts';
import type { Store } from '../../storage/store.ts';
import type { SealedSecret } from '../../contracts/auth.ts';
import type { RealmCipher } from '../auth/realm-key.ts';
import { readRecords, WEBHOOK_SUBSCRIPTION_KIND } from '../../storage/record-kinds.ts';

export const SUBSCRIPTION_NS = 'webhook_subscription';

/** A subscription with its secret source (never leaves actors/). */
export interface Subscription {
  id: string;
  url: string;
  events: ReadonlySet<string>;
  labels?: Record<string, string>;
  source: 'config' | 'api';
  secretEnv?: string;
  secret?: string;
  createdMs?: number;
}

interface StoredSubscription {
  v: 1;
  id: string;
  url: string;
  events: string[];
  session_labels?: Record<string, string>;
  /** Plaintext: records written before secrets were sealed; re-written sealed on load. */
  secret?: string;
  /** The signing secret sealed with the realm key (actors/auth/realm-key.ts), bound to the record id. */
  sealed_secret?: SealedSecret;
  secret_env?: string;
  created_ms: number;
}

const sealAad = (id: string): string => `webhook_subscription:${id}`;

function fromStored(r: StoredSubscription, cipher: RealmCipher | undefined): Subscription {
  const opened = r.sealed_secret && cipher ? cipher.open(sealAad(r.id), r.sealed_secret)?.secret : undefined;
  const secret = r.secret ?? opened;
  return {
    id: r.id,
    url: r.url,
    events: new Set(r.events),
    source: 'api',
    createdMs: r.created_ms,
    ...(r.session_labels ? { labels: r.session_labels } : {}),
    ...(secret ? { secret } : {}),
    ...(r.secret_env ? { secretEnv: r.secret_env } : {}),
  };
}

/** The record as stored: a plaintext secret replaced by its sealed form (when a cipher is available). */
function sealed(r: StoredSubscription, cipher: RealmCipher | undefined): StoredSubscription {
  if (!cipher || r.secret === undefined) return r;
  const { secret, ...rest } = r;
  return { ...rest, sealed_secret: cipher.seal(sealAad(r.id), { secret }) };
}

export class WebhookSubscriptions {
  private readonly api = new Map<string, Subscription>();
  private configSource: Config | null = null;
  private configSubs: Subscription[] = [];

  private cipher: RealmCipher | undefined;

  constructor(
    private readonly store: Store,
    private readonly config: () => Config,
    private readonly now: () => number,
    private readonly openCipher?: () => Promise<RealmCipher>,
  ) {}

  /** Loads the API-created subscriptions; plaintext secrets of older records are sealed in place. */
  async load(): Promise<void> {
    this.cipher = await this.openCipher?.();
    const migrate = [];
    for (const { value } of await readRecords<StoredSubscription>(this.store, WEBHOOK_SUBSCRIPTION_KIND)) {
      this.api.set(value.id, fromStored(value, this.cipher));
      const resealed = sealed(value, this.cipher);
      if (resealed !== value) migrate.push({ op: 'putRecord' as const, ns: SUBSCRIPTION_NS, key: value.id, value: resealed });
    }
    if (migrate.length > 0) await this.store.commit(migrate);
  }

  private fromConfig(): Subscription[] {
    const cfg = this.config();
    if (cfg !== this.configSource) {
      this.configSource = cfg;
      this.configSubs = (cfg.webhooks ?? []).map((w, i) => ({
        id: w.id ?? `config-${i + 1}`,
        url: w.url,
        events: new Set(w.events ?? DEFAULT_WEBHOOK_EVENTS),
        source: 'config' as const,
        secretEnv: w.secret_env,
        ...(w.session_labels ? { labels: w.session_labels } : {}),
      }));
    }
    return this.configSubs;
  }

  all(): Subscription[] {
    return [...this.fromConfig(), ...this.api.values()];
  }

  get(id: string): Subscription | undefined {
    return this.fromConfig().find((s) => s.id === id) ?? this.api.get(id);
  }

  /** Subscriptions interested in an event of this kind from a session with these labels. */
  matching(kind: string, labels: Record<string, string>): Subscription[] {
    const out: Subscription[] = [];
    for (const s of this.all()) {
      if (!s.events.has(kind)) continue;
      if (s.labels && !Object.entries(s.labels).every(([k, v]) => labels[k] === v)) continue;
      out.push(s);
    }
    return out;
  }

  /** True when any subscription exists (the fast path of every ledger write). */
  get any(): boolean {
    return this.api.size > 0 || this.fromConfig().length > 0;
  }

  async create(body: WebhookCreateRequest): Promise<Subscription> {
    if ((body.secret === undefined) === (body.secret_env === undefined)) {
      throw new ServiceError('BAD_REQUEST', 'give exactly one of secret or secret_env');
    }
    const record: StoredSubscription = {
      v: 1,
      id: `wh_${randomUUID()}`,
      url: body.url,
      events: [...new Set(body.events ?? DEFAULT_WEBHOOK_EVENTS)],
      created_ms: this.now(),
      ...(body.session_labels ? { session_labels: body.session_labels } : {}),
      ...(body.secret ? { secret: body.secret } : {}),
      ...(body.secret_env ? { secret_env: body.secret_env } : {}),
    };
    await this.store.commit([{ op: 'putRecord', ns: SUBSCRIPTION_NS, key: record.id, value: sealed(record, this.cipher) }]);
    const sub = fromStored(record, this.cipher);
    this.api.set(sub.id, sub);
    return sub;
  }

  async delete(id: string): Promise<void> {
    const sub = this.get(id);
    if (!sub) throw new ServiceError('NOT_FOUND', `webhook subscription not found: ${id}`, { id });
    if (sub.source === 'config')
      throw new ServiceError('CONFLICT', `webhook subscription ${id} is defined in config.toml; remove it there`, { id });
    await this.store.commit([{ op: 'deleteRecord', ns: SUBSCRIPTION_NS, key: id }]);
    this.api.delete(id);
  }
}

/** The public view of a subscription: where its secret comes from, never the secret. */
export function viewOf(s: Subscription): WebhookView {
  return {
    id: s.id,
    url: s.url,
    events: [...s.events],
    source: s.source,
    secret_source: s.secret ? 'stored' : 'env',
    ...(s.labels ? { session_labels: s.labels } : {}),
    ...(s.createdMs !== undefined ? { created_at: new Date(s.createdMs).toISOString() } : {}),
  };
}

/** The `webhook-id` of one event for one subscription: stable across retries and restarts. */
export function deliveryId(subscriptionId: string, sessionId: string, seq: number): string {
  return `msg_${createHash('sha256').update(`${subscriptionId}\u0000${sessionId}\u0000${seq}`).digest('base64url').slice(0, 27)}`;
}
