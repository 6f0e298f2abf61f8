// contracts/webhooks.ts: signed outbound webhooks (a Warren extension beyond SPEC.md): the `[[webhooks]]`
// config entries, the /webhooks bodies, the stored subscription and delivery records, and the route
// catalog. actors/webhooks/* implements them; http/handlers/webhooks.ts serves the routes.
import { Type, type Static } from 'typebox';
import type { RouteDef } from './route.ts';

/** Event kinds a subscription may name (session ledger kinds); default run_completed + run_failed. */
export const DEFAULT_WEBHOOK_EVENTS = ['run_completed', 'run_failed'];

const EventKinds = Type.Array(Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z_]+$' }), { minItems: 1, maxItems: 64 });
const Labels = Type.Record(Type.String(), Type.String());
const Url = Type.String({ minLength: 8, maxLength: 2048, pattern: '^https?://' });
/** A Standard Webhooks secret: `whsec_` + base64 of 24-64 random bytes. */
const Secret = Type.String({ pattern: '^whsec_[A-Za-z0-9+/=]{32,100}$' });
const EnvName = Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]{0,127}$' });

/** One `[[webhooks]]` entry of config.toml. The secret comes from the named environment variable. */
export const WebhookConfigEntry = Type.Object(
  {
    id: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' })),
    url: Url,
    events: Type.Optional(EventKinds),
    /** Only sessions carrying every one of these labels. */
    session_labels: Type.Optional(Labels),
    secret_env: EnvName,
  },
  { additionalProperties: false },
);
export type WebhookConfigEntry = Static<typeof WebhookConfigEntry>;

/** `[extensions]`: delivery and detached-turn tuning (every key optional). */
export const ExtensionsSection = Type.Object(
  {
    webhook_max_attempts: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    webhook_initial_backoff_ms: Type.Optional(Type.Integer({ minimum: 1, maximum: 3_600_000 })),
    webhook_max_backoff_ms: Type.Optional(Type.Integer({ minimum: 1, maximum: 86_400_000 })),
    webhook_timeout_ms: Type.Optional(Type.Integer({ minimum: 1, maximum: 600_000 })),
    webhook_concurrency: Type.Optional(Type.Integer({ minimum: 1, maximum: 256 })),
    detached_result_ttl_secs: Type.Optional(Type.Integer({ minimum: 1, maximum: 30 * 86_400 })),
    /** Busy policies: follow-ups (and waiting steering inputs) a session may queue; more answer 503. */
    max_queued_turns: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
  },
  { additionalProperties: true },
);
export type ExtensionsSection = Static<typeof ExtensionsSection>;

/** POST /webhooks: exactly one of `secret` (stored, never shown again) or `secret_env`. */
export const WebhookCreateRequest = Type.Object(
  {
    url: Url,
    events: Type.Optional(EventKinds),
    session_labels: Type.Optional(Labels),
    secret: Type.Optional(Secret),
    secret_env: Type.Optional(EnvName),
  },
  { $id: 'WebhookCreateRequest', additionalProperties: false },
);
export type WebhookCreateRequest = Static<typeof WebhookCreateRequest>;

/** A subscription as the API shows it: never the secret, only where it comes from. */
export const WebhookView = Type.Object(
  {
    id: Type.String(),
    url: Type.String(),
    events: Type.Array(Type.String()),
    session_labels: Type.Optional(Labels),
    source: Type.Union([Type.Literal('config'), Type.Literal('api')]),
    secret_source: Type.Union([Type.Literal('env'), Type.Literal('stored')]),
    created_at: Type.Optional(Type.String()),
  },
  { $id: 'WebhookView' },
);
export type WebhookView = Static<typeof WebhookView>;

const WebhookList = Type.Object({ webhooks: Type.Array(WebhookView) }, { $id: 'WebhookList' });
const WebhookDeleted = Type.Object({ id: Type.String(), deleted: Type.Boolean() }, { $id: 'WebhookDeleted' });

export const DeliveryStatus = Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('dead')]);
export type DeliveryStatus = Static<typeof DeliveryStatus>;

/** One outbox entry (stored under `webhook_delivery:<subscription id>`, key `<session id>:<seq>`). */
export const DeliveryRecord = Type.Object({
  v: Type.Literal(1),
  /** The `webhook-id` header: stable across retries and restarts. */
  id: Type.String(),
  subscription_id: Type.String(),
  session_id: Type.String(),
  seq: Type.Integer(),
  event: Type.String(),
  /** The signed body, exactly as sent on every attempt. */
  body: Type.String(),
  status: DeliveryStatus,
  attempts: Type.Integer(),
  created_ms: Type.Integer(),
  next_attempt_ms: Type.Integer(),
  delivered_ms: Type.Optional(Type.Integer()),
  last_status_code: Type.Optional(Type.Integer()),
  last_error: Type.Optional(Type.String()),
});
export type DeliveryRecord = Static<typeof DeliveryRecord>;

const DeliveryView = Type.Object({
  webhook_id: Type.String(),
  session_id: Type.String(),
  seq: Type.Integer(),
  event: Type.String(),
  status: DeliveryStatus,
  attempts: Type.Integer(),
  created_at: Type.String(),
  next_attempt_at: Type.Optional(Type.String()),
  delivered_at: Type.Optional(Type.String()),
  last_status_code: Type.Optional(Type.Integer()),
  last_error: Type.Optional(Type.String()),
});

const DeliveryList = Type.Object(
  { subscription_id: Type.String(), deliveries: Type.Array(DeliveryView), has_more: Type.Boolean() },
  { $id: 'WebhookDeliveryList' },
);

const DeliveryQuery = Type.Object({
  status: Type.Optional(DeliveryStatus),
  offset: Type.Optional(Type.String({ pattern: '^[0-9]{1,9}$' })),
  limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,5}$' })),
});

export const WEBHOOK_ROUTE = {
  create: {
    id: 'webhooks.create',
    method: 'POST',
    path: '/webhooks',
    summary: 'Subscribe a URL to session events (Warren extension)',
    body: WebhookCreateRequest,
    response: { status: 201, schema: WebhookView },
    errors: ['BAD_REQUEST'],
  },
  list: {
    id: 'webhooks.list',
    method: 'GET',
    path: '/webhooks',
    summary: 'Webhook subscriptions from config and the API (secrets never shown)',
    response: { status: 200, schema: WebhookList },
    errors: [],
  },
  delete: {
    id: 'webhooks.delete',
    method: 'DELETE',
    path: '/webhooks/{id}',
    summary: 'Remove an API-created webhook subscription',
    response: { status: 200, schema: WebhookDeleted },
    errors: ['NOT_FOUND', 'CONFLICT'],
  },
  deliveries: {
    id: 'webhooks.deliveries',
    method: 'GET',
    path: '/webhooks/{id}/deliveries',
    summary: 'Outbox entries of one subscription: pending, delivered, dead-lettered',
    query: DeliveryQuery,
    response: { status: 200, schema: DeliveryList },
    errors: ['BAD_REQUEST', 'NOT_FOUND'],
  },
} satisfies Record<string, RouteDef>;

/** In catalog order (route registration and OpenAPI follow it). */
export const WEBHOOK_ROUTES: RouteDef[] = Object.values(WEBHOOK_ROUTE);
