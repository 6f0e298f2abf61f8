// actors/mcp-exposed-sessions.ts: the session tools Warren exposes on its MCP endpoint: list sessions,
// create one (running its first turn) and continue one. Each goes through the same commands as the REST
// routes (session-commands.ts), so the machine decides busy and the reply follows the durable commit.
import { randomUUID } from 'node:crypto';
import { WarrenSessionContinueArgs, WarrenSessionCreateArgs, WarrenSessionsListArgs } from '../contracts/mcp-endpoint.ts';
import type { CreateSessionRequest } from '../contracts/session.ts';
import { errorOfReply, type OwnerCalls } from './cluster/owner-calls.ts';
import type { ExposedResult, ExposedTool } from './mcp-exposed.ts';
import { continueSession, createSession, CreatedWithTurnFailure, type TurnReply } from './session/session-commands.ts';
import type { SessionHost } from './session/session-host.ts';

function structured(value: Record<string, unknown>): ExposedResult {
  return { text: JSON.stringify(value), structured: value };
}

/** Runs a turn under a cancellable request id (POST /requests/{id}/cancel reaches it too). */
async function withRequest(
  sup: SessionHost,
  signal: AbortSignal,
  run: (rid: string, signal: AbortSignal, onCommitting: () => void) => Promise<TurnReply>,
): Promise<TurnReply> {
  const rid = `mcp-${randomUUID()}`;
  const handle = sup.requests.begin(rid);
  const onAbort = () => sup.requests.cancel(rid);
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    return await run(rid, handle.signal, handle.markCommitting);
  } finally {
    signal.removeEventListener('abort', onAbort);
    handle.finish();
  }
}

function turnResult(realmId: string, r: TurnReply): ExposedResult {
  return structured({
    session_id: r.sessionId,
    session_ref: `${realmId}:${r.sessionId}`,
    text: r.text,
    turns: r.turns,
    tool_calls: r.toolCalls,
    usage: r.usage,
  });
}

/**
 * A cluster node runs the turn where the session is served (its owner, or here when nobody holds it)
 * through the REST route, under a request id a cancel of the MCP call reaches on any node.
 */
async function continueOnOwner(
  calls: OwnerCalls,
  realmId: string,
  id: string,
  prompt: string,
  signal: AbortSignal,
): Promise<ExposedResult> {
  const rid = `mcp-${randomUUID()}`;
  const onAbort = (): void => {
    void calls.request({ method: 'POST', path: `/requests/${encodeURIComponent(rid)}/cancel` }).catch(() => undefined);
  };
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    const reply = await calls.request({
      sessionId: id,
      method: 'POST',
      path: `/sessions/${encodeURIComponent(id)}/messages`,
      body: { session_id: id, prompt },
      headers: { 'x-warren-request-id': rid },
    });
    if (reply.status !== 200) throw errorOfReply(reply);
    const b = reply.body as { session_id: string; text: string; turns: number; tool_calls: number; usage: unknown };
    return structured({
      session_id: b.session_id,
      session_ref: `${realmId}:${b.session_id}`,
      text: b.text,
      turns: b.turns,
      tool_calls: b.tool_calls,
      usage: b.usage,
    });
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** warren_sessions_list, warren_session_create, warren_session_continue. */
export function sessionExposedTools(sup: SessionHost, realmId: string): ExposedTool[] {
  return [
    {
      name: 'warren_sessions_list',
      description: 'List the sessions of this Warren realm (newest last), with their message counts and labels.',
      input_schema: WarrenSessionsListArgs,
      async call(args) {
        const a = args as WarrenSessionsListArgs;
        await sup.creationsSettled();
        const records = await sup.deps.store.listSessions({ offset: a.offset ?? 0, ...(a.limit !== undefined ? { limit: a.limit } : {}) });
        const sessions = records.map((r) => ({
          session_id: r.session_id,
          session_ref: `${realmId}:${r.session_id}`,
          created_at: new Date(r.created_at_ms).toISOString(),
          message_count: r.message_count,
          labels: r.labels,
        }));
        return structured({ sessions });
      },
    },
    {
      name: 'warren_session_create',
      description: 'Create a Warren session and run its first turn with the given prompt; returns the session id and the reply text.',
      input_schema: WarrenSessionCreateArgs,
      async call(args, ctx) {
        try {
          const reply = await withRequest(sup, ctx.signal, (rid, signal, onCommitting) =>
            createSession(sup, args as CreateSessionRequest, { requestId: rid, signal, onCommitting }),
          );
          return turnResult(realmId, reply);
        } catch (err) {
          if (!(err instanceof CreatedWithTurnFailure)) throw err;
          const cause = err.cause instanceof Error ? err.cause.message : String(err.cause);
          const body = {
            error: `session created but its first turn failed: ${cause}`,
            code: 'SESSION_CREATED_WITH_TURN_FAILURE',
            session_id: err.sessionId,
          };
          return { text: JSON.stringify(body), structured: body, is_error: true };
        }
      },
    },
    {
      name: 'warren_session_continue',
      description: 'Run the next turn of an existing Warren session with the given prompt; returns the reply text.',
      input_schema: WarrenSessionContinueArgs,
      async call(args, ctx) {
        const a = args as WarrenSessionContinueArgs;
        // `<realm>:<uuid>` locators of this realm are accepted too.
        const id = (a.session_id.startsWith(`${realmId}:`) ? a.session_id.slice(realmId.length + 1) : a.session_id).toLowerCase();
        const calls = sup.deps.ownerCalls;
        if (calls) return continueOnOwner(calls, realmId, id, a.prompt, ctx.signal);
        const reply = await withRequest(sup, ctx.signal, (rid, signal, onCommitting) =>
          continueSession(sup, id, { session_id: id, prompt: a.prompt }, { requestId: rid, signal, onCommitting }),
        );
        return turnResult(realmId, reply);
      },
    },
  ];
}
