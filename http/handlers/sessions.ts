// http/handlers/sessions.ts: the /sessions routes and request cancel. Each handler maps the validated
// request onto a supervisor command and the result onto the response schema; no business logic here.
import { randomUUID } from 'node:crypto';
import { isServiceError, ServiceError } from '../../contracts/errors.ts';
import {
  appendSystemContext,
  continueSession,
  createSession,
  CreatedWithTurnFailure,
  replaceSystemPrompt,
  type TurnReply,
} from '../../actors/session/session-commands.ts';
import type { SessionHost } from '../../actors/session/session-host.ts';
import { historyPage, listSessions, sessionDetail } from '../../actors/session/session-queries.ts';
import type { SessionSettings } from '../../actors/session/session-types.ts';
import { sessionCreatedWithTurnFailure } from '../errors.ts';
import { on, type HandlerContext, type HandlerTable } from '../handler.ts';
import { SESSION_ROUTE } from '../../contracts/routes-sessions.ts';
import { bareSessionId, parseSessionId } from './session-id.ts';
import { prefersAsync, turnExtensions } from './turn-extensions.ts';

const MAX_REQUEST_ID = 256;

/** Reads the opt-in X-Warren-Request-Id header (trimmed; empty is a client error). */
export function clientRequestId(ctx: HandlerContext): string | undefined {
  const raw = ctx.headers['x-warren-request-id'];
  if (raw === undefined) return undefined;
  const id = raw.trim();
  if (!id || id.length > MAX_REQUEST_ID) throw new ServiceError('BAD_REQUEST', 'X-Warren-Request-Id must be 1-256 non-blank characters');
  return id;
}

export function turnBody(realmId: string, r: TurnReply) {
  return {
    session_id: r.sessionId,
    session_ref: `${realmId}:${r.sessionId}`,
    text: r.text,
    turns: r.turns,
    tool_calls: r.toolCalls,
    usage: r.usage,
    // Optional members are omitted when absent, never null (SPEC "Turn response").
    ...('structured_output' in r ? { structured_output: r.structured_output } : {}),
    ...(r.extraction_error ? { extraction_error: r.extraction_error } : {}),
    ...(r.schema_warnings ? { schema_warnings: r.schema_warnings } : {}),
    ...(r.skillDiagnostics ? { skill_diagnostics: r.skillDiagnostics } : {}),
  };
}

function unixSeconds(ms: number): number {
  return Math.floor(ms / 1000);
}

function parseLabelFilters(ctx: HandlerContext): Array<[string, string]> {
  return ctx.queryAll.getAll('label').map((f) => {
    const eq = f.indexOf('=');
    if (eq <= 0) throw new ServiceError('BAD_REQUEST', `malformed label filter '${f}', expected key=value`);
    return [f.slice(0, eq), f.slice(eq + 1)];
  });
}

function intParam(value: string | undefined): number | undefined {
  return value === undefined ? undefined : Number.parseInt(value, 10);
}

/** Handlers of SESSION_ROUTES (except the event stream and ledger, see events.ts). */
export function sessionHandlers(sup: SessionHost, realmId: string, createExtras?: Partial<SessionSettings>): HandlerTable {
  const withRequest = async <T>(
    ctx: HandlerContext,
    run: (rid: string, signal: AbortSignal, onCommitting: () => void) => Promise<T>,
  ): Promise<T> => {
    const rid = clientRequestId(ctx) ?? `auto-${randomUUID()}`;
    const handle = sup.requests.begin(rid);
    try {
      return await run(rid, handle.signal, handle.markCommitting);
    } finally {
      handle.finish();
    }
  };

  return {
    ...on(SESSION_ROUTE.create, async (ctx) => {
      const detached = prefersAsync(ctx) ? turnExtensions(sup).respondAsync : undefined;
      if (detached) return detached('create', ctx);
      try {
        const reply = await withRequest(ctx, (rid, signal, onCommitting) =>
          createSession(sup, ctx.body, { requestId: rid, signal, onCommitting, settings: createExtras }),
        );
        return { status: 200, body: turnBody(realmId, reply) };
      } catch (err) {
        if (err instanceof CreatedWithTurnFailure) {
          const ref = `${realmId}:${err.sessionId}`;
          // A cancelled first turn answers as cancelled (499, wire-notes §11 item 1), still carrying the
          // resumable identity of the session that was durably created (SPEC "Rules for turns").
          if (isServiceError(err.cause) && err.cause.code === 'REQUEST_CANCELLED') {
            throw new ServiceError('REQUEST_CANCELLED', 'request cancelled', {
              session_id: err.sessionId,
              session_ref: ref,
              session_created: true,
              resumable: true,
            });
          }
          // A budget or a hook that stopped the first turn answers with its own status (429, 403).
          if (isServiceError(err.cause) && (err.cause.code === 'BUDGET_EXHAUSTED' || err.cause.code === 'HOOK_DENIED')) {
            const details = (err.cause.details ?? {}) as Record<string, unknown>;
            throw new ServiceError(err.cause.code, err.cause.message, {
              ...details,
              session_id: err.sessionId,
              session_ref: ref,
              session_created: true,
              resumable: true,
            });
          }
          throw sessionCreatedWithTurnFailure(err.sessionId, ref, err.cause);
        }
        throw err;
      }
    }),
    ...on(SESSION_ROUTE['continue'], async (ctx) => {
      // The body's session_id names the same session as the path when it is the same locator in any of
      // its spellings (`<uuid>`, `<realm>:<uuid>`, any case): compared in its bare form by every path below.
      ctx.body.session_id = bareSessionId(ctx.body.session_id, realmId);
      // busy_policy enqueue/steer (Warren extension) goes to the session's follow-up queue.
      const policy = ctx.body.busy_policy;
      const busy = turnExtensions(sup).busyContinue;
      if (busy && (policy === 'enqueue' || policy === 'steer')) return busy(ctx, policy, prefersAsync(ctx));
      const detached = prefersAsync(ctx) ? turnExtensions(sup).respondAsync : undefined;
      if (detached) return detached('continue', ctx);
      const id = parseSessionId(ctx.params.id, realmId);
      const reply = await withRequest(ctx, (rid, signal, onCommitting) =>
        continueSession(sup, id, ctx.body, { requestId: rid, signal, onCommitting }),
      );
      return { status: 200, body: turnBody(realmId, reply) };
    }),
    ...on(SESSION_ROUTE.list, async (ctx) => {
      const labels = parseLabelFilters(ctx);
      const offset = intParam(ctx.query.offset) ?? 0;
      const limit = intParam(ctx.query.limit);
      const items = await listSessions(sup, { labels, offset, ...(limit !== undefined ? { limit } : {}) });
      const sessions = items.map(({ record: rec, running }) => ({
        session_id: rec.session_id,
        session_ref: `${realmId}:${rec.session_id}`,
        created_at: unixSeconds(rec.created_at_ms),
        updated_at: unixSeconds(rec.updated_at_ms),
        message_count: rec.message_count,
        total_tokens: rec.total_tokens,
        is_active: running,
        ...(Object.keys(rec.labels).length ? { labels: rec.labels } : {}),
      }));
      return { status: 200, body: { sessions } };
    }),
    ...on(SESSION_ROUTE.get, async (ctx) => {
      const r = await sessionDetail(sup, parseSessionId(ctx.params.id, realmId));
      return {
        status: 200,
        body: {
          session_id: r.session_id,
          session_ref: `${realmId}:${r.session_id}`,
          created_at: new Date(r.created_at_ms).toISOString(),
          updated_at: new Date(r.updated_at_ms).toISOString(),
          message_count: r.message_count,
          total_tokens: r.total_tokens,
          ...(Object.keys(r.labels).length ? { labels: r.labels } : {}),
        },
      };
    }),
    ...on(SESSION_ROUTE.status, async (ctx) => {
      const id = parseSessionId(ctx.params.id, realmId);
      const actor = await sup.get(id);
      const st = actor.status();
      if (actor.snapshotRecord.archived) return { status: 200, body: { session_id: id, state: 'archived' } };
      const body: Record<string, unknown> = { session_id: id, state: st.state };
      if (st.phase) body.phase = st.phase;
      if (st.hold) body.durable_resume_hold = { hold_class: st.hold, session_id: id, content_retained: true };
      if (st.followUps) body.follow_ups = st.followUps;
      return { status: 200, body };
    }),
    ...on(SESSION_ROUTE.history, async (ctx) => {
      const id = parseSessionId(ctx.params.id, realmId);
      const offset = intParam(ctx.query.offset) ?? 0;
      const limit = intParam(ctx.query.limit);
      const { total, rows } = await historyPage(sup, id, { offset, ...(limit !== undefined ? { limit } : {}) });
      return {
        status: 200,
        body: {
          session_id: id,
          session_ref: `${realmId}:${id}`,
          message_count: total,
          offset,
          ...(limit !== undefined ? { limit } : {}),
          has_more: offset + rows.length < total,
          // A user row without a role predates transcript_role: it was the caller's own prompt.
          messages: rows.map((m) =>
            m.role === 'user' && m.transcript_role === undefined ? { ...m, transcript_role: 'conversational' } : m,
          ),
        },
      };
    }),
    ...on(SESSION_ROUTE.systemContext, async (ctx) => {
      const id = parseSessionId(ctx.params.id, realmId);
      const status = await appendSystemContext(sup, id, ctx.body);
      return { status: 200, body: { session_id: id, status } };
    }),
    ...on(SESSION_ROUTE.systemPrompt, async (ctx) => {
      const id = parseSessionId(ctx.params.id, realmId);
      const body = ctx.body;
      const r = await replaceSystemPrompt(sup, id, body);
      // No `commit`: Warren keeps no transcript rewrite commits of the reference's shape, so it sends none
      // (SystemPromptResponse in /openapi.json declares exactly these members).
      return {
        status: 200,
        body: {
          session_id: id,
          key: body.key,
          version: r.version,
          message_index: r.message_index,
          status: r.status,
          transcript_revision: r.transcript_revision,
        },
      };
    }),
    ...on(SESSION_ROUTE.interrupt, async (ctx) => {
      const id = parseSessionId(ctx.params.id, realmId);
      const actor = await sup.getActive(id);
      const result = actor.interrupt();
      return { status: 200, body: { session_id: id, interrupted: true, result } };
    }),
    ...on(SESSION_ROUTE.archive, async (ctx) => {
      const id = parseSessionId(ctx.params.id, realmId);
      const actor = await sup.getActive(id);
      await actor.archive();
      sup.forget(id);
      ctx.log.info({ sessionId: id }, 'session archived');
      return { status: 200, body: { session_id: id, archived: true } };
    }),
    ...on(SESSION_ROUTE.cancelRequest, (ctx) => {
      const rid = ctx.params.request_id;
      return { status: 200, body: { request_id: rid, ...sup.requests.cancel(rid) } };
    }),
  };
}
