// http/modules/extensions-module.ts: Warren's extensions beyond SPEC.md: signed outbound webhooks from a
// durable outbox (/webhooks), and the discovery route GET /warren/extensions. Declares no capability
// ids: /capabilities keeps SPEC.md's vocabulary.
import { WebhookService } from '../../actors/webhooks/webhook-service.ts';
import { EXTENSION_ROUTES, type ExtensionInfo } from '../../contracts/extensions.ts';
import { WEBHOOK_ROUTES } from '../../contracts/webhooks.ts';
import { webhookHandlers } from '../handlers/webhooks.ts';
import type { ModuleContext, ModuleUnit } from '../module-unit.ts';

const EXTENSIONS: ExtensionInfo[] = [
  {
    name: 'webhooks',
    description: 'Signed outbound webhooks (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature) from a durable outbox written with the events they report; at least once, ordered per session, retried with backoff, dead-lettered after webhook_max_attempts.',
    routes: WEBHOOK_ROUTES.map((r) => `${r.method} ${r.path}`),
    config_keys: ['webhooks', 'extensions.webhook_max_attempts', 'extensions.webhook_initial_backoff_ms', 'extensions.webhook_max_backoff_ms', 'extensions.webhook_timeout_ms', 'extensions.webhook_concurrency'],
  },
];

export function extensionsModule(ctx: ModuleContext): ModuleUnit {
  const { deps } = ctx.supervisor;
  const webhooks = new WebhookService({
    store: deps.store, log: deps.log.child({ component: 'webhooks' }), config: () => ctx.config.current(), now: ctx.clock('webhooks'), env: ctx.env,
  });
  deps.ledgerOutbox = webhooks;
  return {
    name: 'extensions',
    routes: [...EXTENSION_ROUTES, ...WEBHOOK_ROUTES],
    handlers: {
      'warren.extensions': () => ({ status: 200, body: { extensions: EXTENSIONS } }),
      ...webhookHandlers(webhooks),
    },
    configKeys: ['webhooks', 'extensions'],
    close: () => webhooks.close(),
  };
}
