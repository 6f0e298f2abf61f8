// http/handlers/mob.ts: the mob REST routes (observation and helpers, wire-notes §2.10) and the toolkit
// event stream. Every route checks the caller's operator scope first (403 ScopeDenied). An unknown mob
// answers 404 NOT_FOUND on GET /mob/{id}/events and 400 BAD_REQUEST on every other mob route (the
// fallback of mob errors without a typed code; the original code rides in details.cause_code).
import { ServiceError, isServiceError } from '../../contracts/errors.ts';
import type { MobEvent, MobScope } from '../../contracts/mob.ts';
import { MOB_ROUTE } from '../../contracts/routes-mob.ts';
import { moduleEnvelope } from '../../actors/mob/envelope.ts';
import { forkHelper, spawnHelper } from '../../actors/mob/mob-helpers.ts';
import { matches, type MobEventFilter } from '../../actors/mob/mob-ledger.ts';
import type { MobRuntime } from '../../actors/mob/mob-runtime.ts';
import { callerOf } from '../../actors/mob/mob-scopes.ts';
import { on, type HandlerContext, type HandlerResult, type HandlerTable } from '../handler.ts';
import { MobStream } from '../mob-stream.ts';

/** Typed mob codes that keep their own status; everything else falls back to 400. */
const TYPED = new Set([
  'ScopeDenied',
  'STALE_CURSOR',
  'STALE_FENCE',
  'SESSION_BUSY',
  'PROVIDER_ERROR',
  'AGENT_ERROR',
  'BUDGET_EXHAUSTED',
  'INTERNAL_ERROR',
  'SERVICE_UNAVAILABLE',
]);

async function fallback(run: () => Promise<HandlerResult>): Promise<HandlerResult> {
  try {
    return await run();
  } catch (err) {
    if (isServiceError(err) && !TYPED.has(err.code) && err.code !== 'BAD_REQUEST') {
      throw new ServiceError('BAD_REQUEST', err.message, {
        cause_code: err.code,
        ...(err.details && typeof err.details === 'object' ? err.details : {}),
      });
    }
    throw err;
  }
}

/** The cursor asked for (query, else Last-Event-ID); undefined when none: the oldest retained event on. */
function cursorFrom(ctx: Pick<HandlerContext, 'headers'>, query: string | undefined): number | undefined {
  const raw = query ?? ctx.headers['last-event-id'];
  if (raw === undefined || raw === '') return undefined;
  if (!/^[0-9]{1,15}$/.test(raw)) throw new ServiceError('BAD_REQUEST', 'Last-Event-ID must be a cursor (a non-negative integer)');
  return Number(raw);
}

export function mobHandlers(rt: MobRuntime): HandlerTable {
  const { host } = rt;
  const guard = async (ctx: Pick<HandlerContext, 'headers'>, scope: MobScope): Promise<void> => {
    const caller = callerOf(ctx.headers);
    await rt.scopes.fresh(caller);
    rt.scopes.require(caller, scope);
  };
  const ok = (body: unknown): HandlerResult => ({ status: 200, body });
  /** A new stream, ended with `done` by the runtime at shutdown. */
  const open = (ctx: Pick<HandlerContext, 'res'>): MobStream => {
    const stream = new MobStream(ctx.res);
    rt.streams.add(stream);
    stream.onEnd(() => rt.streams.delete(stream));
    return stream;
  };

  return {
    ...on(MOB_ROUTE.events, async (ctx) => {
      await guard(ctx, 'MobRead');
      const mob = await host.get(ctx.params.id);
      const member = ctx.query.member;
      if (member !== undefined && !mob.members.has(member) && !mob.record.retired_helpers?.some((r) => r.agent_identity === member))
        throw new ServiceError('NOT_FOUND', `no member ${member} in mob ${mob.id}`);
      // A cursor the ledger no longer holds (or never had) is refused before the stream opens: 410 STALE_CURSOR.
      const after = await rt.ledger.resolveCursor(cursorFrom(ctx, ctx.query.after_cursor));
      const stream = open(ctx);
      stream.send('stream_opened', { mob_id: mob.id, ...(member ? { member } : {}) });
      const filter: MobEventFilter = { mob_id: mob.id, ...(member ? { agent_identity: member } : {}) };
      // Live events wait while the replay is written, then follow it (no gap, no duplicate).
      let last = after;
      const held: MobEvent[] = [];
      let replaying = true;
      const sendStructural = (e: MobEvent) => {
        if (e.cursor <= last) return;
        last = e.cursor;
        stream.send(e.kind, moduleEnvelope(e), e.cursor);
      };
      const offLedger = rt.ledger.subscribe((e) => {
        if (!matches(e, filter)) return;
        if (replaying) held.push(e);
        else sendStructural(e);
      });
      const offAgent = host.agentEvents.subscribe(mob.id, (env) => {
        if (!member || (env.event as { agent_id?: string }).agent_id === member)
          stream.send((env.event as { event_type: string }).event_type, env);
      });
      stream.onEnd(() => {
        offLedger();
        offAgent();
      });
      const { merged } = await rt.replay(mob.id, after, member);
      for (const env of merged) {
        if (env.source === 'module') sendStructural((env.event as { payload: MobEvent }).payload);
        else stream.send((env.event as { event_type: string }).event_type, env);
      }
      replaying = false;
      for (const e of held.splice(0)) sendStructural(e);
      // The stream ends with `done` when the mob is destroyed.
      if (mob.state === 'destroyed') stream.close();
      else {
        const offDone = rt.ledger.subscribe((e) => {
          if (e.mob_id === mob.id && e.kind === 'mob_destroyed') setImmediate(() => stream.close());
        });
        stream.onEnd(offDone);
      }
      return { streamed: true };
    }),

    ...on(MOB_ROUTE.toolkitStream, async (ctx) => {
      await guard(ctx, 'MobRead');
      const q = ctx.query;
      const filter: MobEventFilter = {
        ...(q.mob_id ? { mob_id: q.mob_id } : {}),
        ...(q.kinds
          ? {
              kinds: q.kinds
                .split(',')
                .map((k) => k.trim())
                .filter(Boolean),
            }
          : {}),
        ...(q.agent_identity ? { agent_identity: q.agent_identity } : {}),
        ...(q.run_id ? { run_id: q.run_id } : {}),
      };
      let last = await rt.ledger.resolveCursor(cursorFrom(ctx, q.after_cursor));
      const stream = open(ctx);
      stream.send('stream_opened', { after_cursor: last, head_cursor: rt.ledger.headCursor, filter });
      const held: MobEvent[] = [];
      let replaying = true;
      const send = (e: MobEvent) => {
        if (e.cursor <= last) return;
        last = e.cursor;
        stream.send(e.kind, e, e.cursor);
      };
      const off = rt.ledger.subscribe((e) => {
        if (!matches(e, filter)) return;
        if (replaying) held.push(e);
        else send(e);
      });
      stream.onEnd(off);
      for (;;) {
        const batch = await rt.ledger.range(last, 1000, filter);
        for (const e of batch) send(e);
        if (batch.length < 1000 || stream.closed) break;
      }
      replaying = false;
      for (const e of held.splice(0)) send(e);
      return { streamed: true };
    }),

    ...on(MOB_ROUTE.spawnHelper, (ctx) =>
      fallback(async () => {
        await guard(ctx, 'HelperControl');
        const b = ctx.body;
        return ok(
          await spawnHelper(host, ctx.params.id, {
            prompt: b.prompt,
            result_label: b.result_label,
            max_text_bytes: b.max_text_bytes,
            agent_identity: b.agent_identity,
            ...(b.role_name ? { role_name: b.role_name } : {}),
            ...(b.model_override ? { model_override: b.model_override } : {}),
            ...(b.provider ? { provider: b.provider } : {}),
          }),
        );
      }),
    ),

    ...on(MOB_ROUTE.forkHelper, (ctx) =>
      fallback(async () => {
        await guard(ctx, 'HelperControl');
        const b = ctx.body;
        return ok(
          await forkHelper(host, ctx.params.id, {
            prompt: b.prompt,
            result_label: b.result_label,
            max_text_bytes: b.max_text_bytes,
            agent_identity: b.agent_identity,
            source_member_id: b.source_member_id,
            ...(b.role_name ? { role_name: b.role_name } : {}),
            ...(b.model_override ? { model_override: b.model_override } : {}),
            ...(b.provider ? { provider: b.provider } : {}),
            ...(b.fork_context ? { fork_context: b.fork_context } : {}),
          }),
        );
      }),
    ),

    ...on(MOB_ROUTE.waitKickoff, (ctx) =>
      fallback(async () => {
        await guard(ctx, 'MobRead');
        const mob = await host.get(ctx.params.id);
        const members = await host.turns.waitKickoff(mob, ctx.body?.member_ids, ctx.body?.timeout_ms);
        return ok({ members: members.map((m) => rt.memberSnapshot(mob, m)) });
      }),
    ),

    ...on(MOB_ROUTE.wireBatch, (ctx) =>
      fallback(async () => {
        await guard(ctx, 'MemberWire');
        const mob = await host.live(ctx.params.id);
        host.fence(mob, ctx.body);
        return ok(await host.wiring.wire(mob, ctx.body.edges));
      }),
    ),

    ...on(MOB_ROUTE.memberStatus, (ctx) =>
      fallback(async () => {
        await guard(ctx, 'MobRead');
        const mob = await host.get(ctx.params.id);
        return ok(rt.memberSnapshot(mob, host.memberRecord(mob, ctx.params.agent_identity)));
      }),
    ),

    ...on(MOB_ROUTE.memberHistory, (ctx) =>
      fallback(async () => {
        await guard(ctx, 'MobRead');
        const mob = await host.get(ctx.params.id);
        const rec = host.memberRecord(mob, ctx.params.agent_identity);
        const from = Number(ctx.query.from_index ?? 0);
        const limit = ctx.query.limit !== undefined ? Number(ctx.query.limit) : 100;
        const { total, rows } =
          rec.session_id && (await host.sessions.exists(rec.session_id))
            ? await host.sessions.history(rec.session_id, from, limit)
            : { total: 0, rows: [] };
        const next = from + rows.length;
        return ok({
          generation: rec.generation,
          page: {
            from_index: from,
            message_count: total,
            messages: rows,
            ...(next < total ? { next_index: next } : {}),
            complete: next >= total,
          },
          provenance: 'host_claimed',
        });
      }),
    ),

    ...on(MOB_ROUTE.memberCancel, (ctx) =>
      fallback(async () => {
        await guard(ctx, 'MemberLifecycle');
        await host.cancel(await host.live(ctx.params.id), ctx.params.agent_identity);
        return ok({ cancelled: true });
      }),
    ),

    ...on(MOB_ROUTE.memberRespawn, (ctx) =>
      fallback(async () => {
        await guard(ctx, 'MemberLifecycle');
        const mob = await host.live(ctx.params.id);
        host.fence(mob, ctx.body ?? {}, ctx.params.agent_identity);
        return ok(await host.respawn(mob, ctx.params.agent_identity, ctx.body?.initial_message));
      }),
    ),

    ...on(MOB_ROUTE.hosts, (ctx) =>
      fallback(async () => {
        await guard(ctx, 'MobRead');
        return ok({ hosts: await rt.placement.hosts(await host.get(ctx.params.id)) });
      }),
    ),

    ...on(MOB_ROUTE.routeInstalls, (ctx) =>
      fallback(async () => {
        await guard(ctx, 'MobRead');
        return ok(await rt.placement.routeInstalls(await host.get(ctx.params.id)));
      }),
    ),
  };
}
