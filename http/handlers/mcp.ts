// http/handlers/mcp.ts: POST /sessions/{id}/mcp/add|remove|reload (wire-notes §2.6) and the Warren
// extension GET /sessions/{id}/mcp. Each maps the validated body onto an actors/mcp-live.ts command.
import type { McpAddRequest, McpReloadRequest, McpRemoveRequest } from '../../contracts/mcp.ts';
import type { McpLive } from '../../actors/mcp-live.ts';
import type { HandlerTable } from '../handler.ts';
import { parseSessionId } from './session-id.ts';

/** Handlers of MCP_ROUTES. */
export function mcpHandlers(live: McpLive, realmId: string): HandlerTable {
  return {
    'sessions.mcpAdd': async (ctx) => ({ status: 200, body: await live.add(parseSessionId(ctx.params.id, realmId), ctx.body as McpAddRequest) }),
    'sessions.mcpRemove': async (ctx) => ({ status: 200, body: await live.remove(parseSessionId(ctx.params.id, realmId), ctx.body as McpRemoveRequest) }),
    'sessions.mcpReload': async (ctx) => ({ status: 200, body: await live.reload(parseSessionId(ctx.params.id, realmId), ctx.body as McpReloadRequest) }),
    'sessions.mcpStatus': async (ctx) => ({ status: 200, body: await live.status(parseSessionId(ctx.params.id, realmId), ctx.query.wait === 'settled') }),
  };
}
