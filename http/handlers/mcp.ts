// http/handlers/mcp.ts: POST /sessions/{id}/mcp/add|remove|reload (wire-notes §2.6) and the Warren
// extension GET /sessions/{id}/mcp. Each maps the validated body onto an actors/mcp-live.ts command.
import type { McpLive } from '../../actors/mcp-live.ts';
import { MCP_ROUTE } from '../../contracts/mcp.ts';
import { on, type HandlerTable } from '../handler.ts';
import { bareSessionId, parseSessionId } from './session-id.ts';

/** Handlers of MCP_ROUTES. */
export function mcpHandlers(live: McpLive, realmId: string): HandlerTable {
  // The body's session_id names the path's session in any spelling of its locator (`<uuid>`,
  // `<realm>:<uuid>`, any case): mcp-live compares it with the bare path id, so it gets the bare form too.
  const bare = <B extends { session_id: string }>(body: B): B => ({ ...body, session_id: bareSessionId(body.session_id, realmId) });
  return {
    ...on(MCP_ROUTE.add, async (ctx) => ({ status: 200, body: await live.add(parseSessionId(ctx.params.id, realmId), bare(ctx.body)) })),
    ...on(MCP_ROUTE.remove, async (ctx) => ({
      status: 200,
      body: await live.remove(parseSessionId(ctx.params.id, realmId), bare(ctx.body)),
    })),
    ...on(MCP_ROUTE.reload, async (ctx) => ({
      status: 200,
      body: await live.reload(parseSessionId(ctx.params.id, realmId), bare(ctx.body)),
    })),
    ...on(MCP_ROUTE.status, async (ctx) => ({
      status: 200,
      body: await live.status(parseSessionId(ctx.params.id, realmId), ctx.query.wait === 'settled'),
    })),
  };
}
