// http/handlers/workgraph.ts: the read-only WorkGraph routes (contracts/workgraph.ts WORKGRAPH_ROUTES):
// items, item, ready, snapshot, events, and the two POST reads (goal status, attention list). Mutations
// are deliberately absent from REST (SPEC.md). Query arrays accept repeated keys and comma lists.
import { ServiceError } from '../../contracts/errors.ts';
import { WORK_STATUSES, WORKGRAPH_ROUTE, type WorkStatus } from '../../contracts/workgraph.ts';
import type { WorkListInput } from '../../contracts/workgraph-inputs.ts';
import { goalStatus, listAttention } from '../../actors/workgraph/wg-goals.ts';
import type { WorkGraphHost } from '../../actors/workgraph/wg-host.ts';
import { on, type HandlerContext, type HandlerTable } from '../handler.ts';

/** Every value of a repeatable query key, comma lists split, empties dropped. */
function many(ctx: HandlerContext, key: string): string[] | undefined {
  const values = ctx.queryAll
    .getAll(key)
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
  return values.length > 0 ? values : undefined;
}

function statuses(ctx: HandlerContext): WorkStatus[] | undefined {
  const values = many(ctx, 'statuses');
  for (const v of values ?? []) {
    if (!(WORK_STATUSES as readonly string[]).includes(v))
      throw new ServiceError('BAD_REQUEST', `unknown status '${v}'; expected one of ${WORK_STATUSES.join(', ')}`);
  }
  return values as WorkStatus[] | undefined;
}

const flag = (v: string | undefined): boolean | undefined => (v === undefined ? undefined : v === 'true');
const count = (v: string | undefined): number | undefined => (v === undefined ? undefined : Number(v));

function listQuery(host: WorkGraphHost, ctx: HandlerContext): WorkListInput {
  const q = ctx.query;
  host.checkRealm(q.realm_id);
  const out: WorkListInput = {};
  if (q.namespace !== undefined) out.namespace = q.namespace;
  const all = flag(q.all_namespaces);
  if (all !== undefined) out.all_namespaces = all;
  const s = statuses(ctx);
  if (s) out.statuses = s;
  const labels = many(ctx, 'labels');
  if (labels) out.labels = labels;
  const inc = flag(q.include_terminal);
  if (inc !== undefined) out.include_terminal = inc;
  const limit = count(q.limit);
  if (limit !== undefined) out.limit = limit;
  return out;
}

export function workGraphHandlers(host: WorkGraphHost): HandlerTable {
  return {
    ...on(WORKGRAPH_ROUTE.items, async (ctx) => ({ status: 200, body: { items: await host.list(listQuery(host, ctx)) } })),
    ...on(WORKGRAPH_ROUTE.item, async (ctx) => {
      host.checkRealm(ctx.query.realm_id);
      return {
        status: 200,
        body: await host.get({ item_id: ctx.params.id, ...(ctx.query.namespace ? { namespace: ctx.query.namespace } : {}) }),
      };
    }),
    ...on(WORKGRAPH_ROUTE.ready, async (ctx) => {
      const q = ctx.query;
      host.checkRealm(q.realm_id);
      const labels = many(ctx, 'labels');
      const limit = count(q.limit);
      const items = await host.ready({
        ...(q.namespace ? { namespace: q.namespace } : {}),
        ...(labels ? { labels } : {}),
        ...(limit !== undefined ? { limit } : {}),
      });
      return { status: 200, body: { items } };
    }),
    ...on(WORKGRAPH_ROUTE.snapshot, async (ctx) => ({ status: 200, body: await host.snapshot(listQuery(host, ctx)) })),
    ...on(WORKGRAPH_ROUTE.events, async (ctx) => {
      const q = ctx.query;
      host.checkRealm(q.realm_id);
      // Events are one ordered log per namespace: a cross-namespace read has no single seq order (wire-notes 2.5).
      if (q.all_namespaces === 'true')
        throw new ServiceError('BAD_REQUEST', 'events are read per namespace; all_namespaces=true is not supported');
      const limit = count(q.limit);
      const page = await host.events({
        ...(q.namespace ? { namespace: q.namespace } : {}),
        after_seq: Math.max(0, Number(q.after_seq ?? 0)),
        ...(limit !== undefined ? { limit } : {}),
      });
      return { status: 200, body: page };
    }),
    ...on(WORKGRAPH_ROUTE.goalStatus, async (ctx) => {
      const body = ctx.body;
      host.checkRealm(body.realm_id);
      return { status: 200, body: await goalStatus(host, body.binding_id, body.namespace) };
    }),
    ...on(WORKGRAPH_ROUTE.attentionList, async (ctx) => ({ status: 200, body: { attention: await listAttention(host, ctx.body) } })),
  };
}
