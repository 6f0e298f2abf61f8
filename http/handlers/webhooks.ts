// http/handlers/webhooks.ts: the /webhooks routes (Warren extension). Subscriptions and their outbox
// come from actors/webhooks/webhook-service.ts; secrets never reach a response.
import type { WebhookService } from '../../actors/webhooks/webhook-service.ts';
import { viewOf } from '../../actors/webhooks/webhook-subscriptions.ts';
import { WEBHOOK_ROUTE, type DeliveryRecord } from '../../contracts/webhooks.ts';
import { ServiceError } from '../../contracts/errors.ts';
import { on, type HandlerTable } from '../handler.ts';

const iso = (ms: number) => new Date(ms).toISOString();

function deliveryView(r: DeliveryRecord) {
  return {
    webhook_id: r.id,
    session_id: r.session_id,
    seq: r.seq,
    event: r.event,
    status: r.status,
    attempts: r.attempts,
    created_at: iso(r.created_ms),
    ...(r.status === 'pending' ? { next_attempt_at: iso(r.next_attempt_ms) } : {}),
    ...(r.delivered_ms !== undefined ? { delivered_at: iso(r.delivered_ms) } : {}),
    ...(r.last_status_code !== undefined ? { last_status_code: r.last_status_code } : {}),
    ...(r.last_error !== undefined ? { last_error: r.last_error } : {}),
  };
}

export function webhookHandlers(service: WebhookService): HandlerTable {
  return {
    ...on(WEBHOOK_ROUTE.create, async (ctx) => ({ status: 201, body: viewOf(await service.create(ctx.body)) })),
    ...on(WEBHOOK_ROUTE.list, async () => {
      await service.ready;
      return { status: 200, body: { webhooks: service.subscriptions.all().map(viewOf) } };
    }),
    ...on(WEBHOOK_ROUTE['delete'], async (ctx) => {
      await service.delete(ctx.params.id);
      return { status: 200, body: { id: ctx.params.id, deleted: true } };
    }),
    ...on(WEBHOOK_ROUTE.deliveries, async (ctx) => {
      const offset = ctx.query.offset === undefined ? 0 : Number(ctx.query.offset);
      const limit = ctx.query.limit === undefined ? 100 : Number(ctx.query.limit);
      if (limit < 1 || limit > 1000) throw new ServiceError('BAD_REQUEST', 'limit must be 1-1000');
      const status = ctx.query.status;
      const { records, hasMore } = await service.deliveries(ctx.params.id, { offset, limit, ...(status ? { status } : {}) });
      return { status: 200, body: { subscription_id: ctx.params.id, deliveries: records.map(deliveryView), has_more: hasMore } };
    }),
  };
}
