// http/handlers/replay.ts: the replay routes (docs/replay.md). Each maps the validated request onto the
// replay service (actors/replay/) and its result onto the response schema.
import { REPLAY_ROUTE } from '../../contracts/replay.ts';
import type { ReplayService } from '../../actors/replay/replay-service.ts';
import { on, type HandlerTable } from '../handler.ts';
import { parseSessionId } from './session-id.ts';
import { prefersAsync } from './turn-extensions.ts';

export interface ReplayHandlerDeps {
  service: ReplayService;
  realm: { realmId: string; backend: string };
  /** Background replays (Prefer: respond-async), awaited at close. */
  track(p: Promise<unknown>): void;
}

export function replayHandlers(deps: ReplayHandlerDeps): HandlerTable {
  const { service, realm } = deps;
  const realmId = realm.realmId;
  return {
    ...on(REPLAY_ROUTE.replay, async (ctx) => {
      const id = parseSessionId(ctx.params.id, realmId);
      const { actor, run } = await service.prepareReplay(id, ctx.body ?? {});
      if (prefersAsync(ctx)) {
        deps.track(run().catch((err) => ctx.log.error({ err, sessionId: actor.id }, 'replay failed')));
        return {
          status: 202,
          body: {
            replay_session_id: actor.id,
            request_id: ctx.requestId,
            status: 'accepted',
            report_url: `/sessions/${actor.id}/replay-report`,
            events_url: `/sessions/${actor.id}/events`,
          },
        };
      }
      return { status: 200, body: await run() };
    }),
    ...on(REPLAY_ROUTE.replayReport, async (ctx) => ({ status: 200, body: await service.report(parseSessionId(ctx.params.id, realmId)) })),
    ...on(REPLAY_ROUTE.turns, async (ctx) => ({ status: 200, body: await service.turns(parseSessionId(ctx.params.id, realmId)) })),
    ...on(REPLAY_ROUTE.fork, async (ctx) => {
      const id = parseSessionId(ctx.params.id, realmId);
      const r = await service.fork(id, ctx.body ?? {});
      return { status: 200, body: { session_id: r.sessionId, forked_from: id, at_turn: r.atTurn, message_count: r.messageCount } };
    }),
    ...on(REPLAY_ROUTE.rerun, async (ctx) => ({
      status: 200,
      body: await service.rerun(parseSessionId(ctx.params.id, realmId), ctx.body),
    })),
    ...on(REPLAY_ROUTE.export, async (ctx) => {
      const id = parseSessionId(ctx.params.id, realmId);
      const text = await service.exportSession(id, realm);
      return {
        status: 200,
        text,
        headers: { 'content-type': 'application/x-ndjson', 'content-disposition': `attachment; filename="${id}.jsonl"` },
      };
    }),
    ...on(REPLAY_ROUTE.import, async (ctx) => {
      const r = await service.importSession((ctx.rawBody ?? Buffer.alloc(0)).toString('utf8'), ctx.query.new_id === 'true');
      return {
        status: 200,
        body: { session_id: r.sessionId, message_count: r.messageCount, recordings: r.recordings, ledger_entries: r.ledgerEntries },
      };
    }),
  };
}
