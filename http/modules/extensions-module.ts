// http/modules/extensions-module.ts: Warren's extensions beyond SPEC.md: signed outbound webhooks from a
// durable outbox (/webhooks), detached turns (Prefer: respond-async, /requests/{id}), busy policies
// (busy_policy on continue: a durable follow-up queue and steering), and the discovery route GET
// /warren/extensions. Declares no capability ids: /capabilities keeps SPEC.md's vocabulary.
import { join } from 'node:path';
import { openRealmKey, REALM_KEY_FILE } from '../../actors/auth/realm-key.ts';
import { FollowUps } from '../../actors/busy/follow-ups.ts';
import { DetachedRequests } from '../../actors/detached/detached-requests.ts';
import { WebhookService } from '../../actors/webhooks/webhook-service.ts';
import { DETACHED_ROUTES } from '../../contracts/detached.ts';
import { EXTENSION_ROUTES, type ExtensionInfo } from '../../contracts/extensions.ts';
import { PROTOCOL_EXTENSIONS } from '../../contracts/routes-protocols.ts';
import { WEBHOOK_ROUTES } from '../../contracts/webhooks.ts';
import { REPLAY_EXTENSION } from '../../contracts/replay.ts';
import { busyContinue, detachedAnswers } from '../handlers/busy.ts';
import { detachedHandlers, detachedStarter } from '../handlers/detached.ts';
import { turnExtensions } from '../handlers/turn-extensions.ts';
import { webhookHandlers } from '../handlers/webhooks.ts';
import type { ModuleContext, ModuleUnit } from '../module-unit.ts';

const EXTENSIONS: ExtensionInfo[] = [
  {
    name: 'webhooks',
    description:
      'Signed outbound webhooks (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature) from a durable outbox written with the events they report; at least once, ordered per session, retried with backoff, dead-lettered after webhook_max_attempts.',
    routes: WEBHOOK_ROUTES.map((r) => `${r.method} ${r.path}`),
    config_keys: [
      'webhooks',
      'extensions.webhook_max_attempts',
      'extensions.webhook_initial_backoff_ms',
      'extensions.webhook_max_backoff_ms',
      'extensions.webhook_timeout_ms',
      'extensions.webhook_concurrency',
    ],
  },
  {
    name: 'detached_turns',
    description:
      'POST /sessions and POST /sessions/{id}/messages with `Prefer: respond-async` answer 202 {session_id, request_id, status_url, events_url} once the pending input is durable; GET /requests/{request_id} reports queued | running | completed (the synchronous response) | failed (its error envelope) | cancelled, truthfully after a restart; results expire after extensions.detached_result_ttl_secs (then 404 with details.reason "expired"). GET /sessions/{id}/events?request_id= starts at that turn\'s first event.',
    routes: [
      'POST /sessions',
      'POST /sessions/{id}/messages',
      ...DETACHED_ROUTES.map((r) => `${r.method} ${r.path}`),
      'POST /requests/{request_id}/cancel',
      'GET /sessions/{id}/events',
    ],
    request_headers: ['Prefer: respond-async'],
    request_fields: ['GET /sessions/{id}/events?request_id='],
    config_keys: ['extensions.detached_result_ttl_secs'],
  },
  {
    name: 'busy_policies',
    description:
      "POST /sessions/{id}/messages accepts busy_policy: reject (default: 409 SESSION_BUSY while a turn runs) | enqueue (a durable follow-up run in order after the current turn; 503 SERVICE_UNAVAILABLE when extensions.max_queued_turns wait) | steer (injected as a user message before the running turn's next model call and answered with that turn's response; a turn that ends first leaves it to run as the next turn). Without Prefer: respond-async the request waits for its turn; with it, 202 at once and GET /requests/{id} reports queued, then the turn. Interrupt cancels only the running turn (the queue goes on); archive drops the queue. Queued follow-ups survive a restart and run at startup. Create accepts and ignores busy_policy.",
    routes: ['POST /sessions/{id}/messages', 'GET /requests/{request_id}', 'POST /requests/{request_id}/cancel'],
    request_headers: ['Prefer: respond-async'],
    request_fields: ['busy_policy'],
    config_keys: ['extensions.max_queued_turns'],
  },
  ...PROTOCOL_EXTENSIONS,
];

const DEFAULT_MAX_QUEUED_TURNS = 16;

export function extensionsModule(ctx: ModuleContext): ModuleUnit {
  const { deps } = ctx.supervisor;
  const webhooks = new WebhookService({
    store: deps.store,
    log: ctx.log.child({ component: 'webhooks' }),
    config: ctx.supervisor.deps.config,
    now: ctx.clock('webhooks'),
    env: ctx.env,
    outbound: deps.outbound,
    ...(ctx.realm.dir ? { cipher: realmCipher(ctx.realm.dir) } : {}),
  });
  deps.ledgerOutbox = webhooks;
  const ttlMs = () => (ctx.config.current().extensions?.detached_result_ttl_secs ?? 3600) * 1000;
  const detached = new DetachedRequests(deps.store, ctx.clock('detached'), ttlMs);
  const slot = turnExtensions(ctx.sessions());
  slot.respondAsync = detachedStarter(ctx.sessions(), detached, ctx.realm.realmId);
  // A follow-up still queued (busy policies) has no first event yet: its stream starts at the live tail.
  slot.requestStartSeq = (rid, sid) => detached.firstSeq(rid, sid, async () => (await ctx.sessions().get(sid)).hub.lastSeq + 1);
  const followUps = new FollowUps(ctx.sessions(), {
    log: ctx.log.child({ component: 'busy' }),
    now: ctx.clock('busy'),
    maxQueued: () => ctx.config.current().extensions?.max_queued_turns ?? DEFAULT_MAX_QUEUED_TURNS,
    detached: detachedAnswers(detached, ctx.realm.realmId, ctx.log.child({ component: 'busy' })),
  });
  deps.followUps = followUps;
  slot.busyContinue = busyContinue(followUps, ctx.realm.realmId);
  return {
    name: 'extensions',
    routes: [...EXTENSION_ROUTES, ...WEBHOOK_ROUTES, ...DETACHED_ROUTES],
    handlers: {
      'warren.extensions': () => ({ status: 200, body: { extensions: [...EXTENSIONS, REPLAY_EXTENSION] } }),
      ...webhookHandlers(webhooks),
      ...detachedHandlers(detached, ttlMs),
    },
    configKeys: ['webhooks', 'extensions'],
    // Follow-ups queued before a restart run again, in order per session.
    start: () => followUps.resumeStored(),
    close: () => webhooks.close(),
  };
}

/** Opens the realm key once, on first use. */
function realmCipher(dir: string): () => ReturnType<typeof openRealmKey> {
  let key: ReturnType<typeof openRealmKey> | undefined;
  return () => (key ??= openRealmKey(join(dir, REALM_KEY_FILE)));
}
