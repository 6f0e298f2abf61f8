// http/handlers/inspect.ts: the inspection routes the actor viewer reads (contracts/routes-observe.ts):
// the actor listing, one actor's detail, a machine definition, the inspection SSE stream (one stream
// for all actors, filterable by kind and id, bounded per subscriber like session streams) and a
// session's time-travel timeline.
import { ServiceError } from '../../contracts/errors.ts';
import type { Observability } from '../../actors/observe/observability.ts';
import type { HandlerTable } from '../handler.ts';
import { envelopeOf, SseSubscriber, type SseOptions } from '../sse.ts';
import { parseSessionId } from './session-id.ts';

const LIST_DEFAULT = 500;

/** Handlers of the inspection routes. */
export function inspectHandlers(obs: Observability, realmId: string, opts: { sse?: SseOptions } = {}): HandlerTable {
  return {
    'inspect.actors': (ctx) => {
      const labels: Array<[string, string]> = ctx.queryAll.getAll('label').map((l) => {
        const eq = l.indexOf('=');
        if (eq <= 0) throw new ServiceError('BAD_REQUEST', `label filter must be key=value: ${l}`);
        return [l.slice(0, eq), l.slice(eq + 1)];
      });
      const limit = ctx.query.limit ? Number(ctx.query.limit) : LIST_DEFAULT;
      return { status: 200, body: obs.actors({ kind: ctx.query.kind, state: ctx.query.state, labels, limit }) };
    },
    'inspect.actor': async (ctx) => {
      const d = await obs.actorDetail(ctx.params.kind, ctx.params.id);
      const body: Record<string, unknown> = { actor: d.actor, recent_events: d.recent, now_ms: d.nowMs };
      if (d.session) {
        body.session = {
          turn_phase: d.session.turnPhase,
          message_count: d.session.messageCount,
          transcript_tail: d.session.transcriptTail,
          ledger_tail: d.session.ledgerTail.map((e) => envelopeOf(d.actor.id, e)),
          in_flight: d.inFlight,
        };
      }
      return { status: 200, body };
    },
    'inspect.machine': (ctx) => ({ status: 200, body: obs.machine(ctx.params.kind) }),
    'inspect.timeline': async (ctx) => {
      const id = parseSessionId(ctx.params.id, realmId);
      const after = ctx.query.after_seq ? Number(ctx.query.after_seq) : 0;
      const limit = ctx.query.limit ? Number(ctx.query.limit) : 200;
      if (limit < 1) throw new ServiceError('BAD_REQUEST', 'limit must be at least 1');
      const t = await obs.timeline(id, after, limit);
      return {
        status: 200,
        body: {
          session_id: id,
          steps: t.steps.map((s) => ({ entry: envelopeOf(id, s.entry), machine_event: s.machineEvent, value: s.value, state: s.state })),
          last_seq: t.lastSeq,
          has_more: t.hasMore,
        },
      };
    },
    'inspect.events': async (ctx) => {
      const { res } = ctx;
      if (res.aborted) return { streamed: true };
      res.startStream(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
      const { inspector } = obs;
      const upTo = inspector.lastSeq;
      let unsubscribe = (): void => {};
      const sub = new SseSubscriber('inspect', res, upTo, () => unsubscribe(), {
        ...opts.sse,
        log: ctx.log,
        onTruncated: obs.inspectSseTruncated,
      });
      unsubscribe = inspector.subscribe(sub, { kind: ctx.query.kind, id: ctx.query.id });
      await sub.control('inspect_loaded', { type: 'inspect_loaded', last_seq: upTo });
      return { streamed: true };
    },
  };
}
