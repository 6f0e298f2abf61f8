// http/modules/mcp-module.ts: the MCP module. Live MCP tool servers on sessions (the mcp_live capability):
// the /sessions/{id}/mcp routes, `[tools] mcp_servers`, and each session's MCP tools contributed at its
// turn boundary.
import { McpLive } from '../../actors/mcp-live.ts';
import { MCP_ROUTES } from '../../contracts/mcp.ts';
import { WARREN_VERSION } from '../../contracts/routes-system.ts';
import { mcpHandlers } from '../handlers/mcp.ts';
import type { ModuleContext, ModuleUnit } from '../module-unit.ts';

export function mcpModule(ctx: ModuleContext): ModuleUnit {
  const { deps } = ctx.supervisor;
  const live = new McpLive({
    sessions: ctx.sessions(), store: deps.store, log: deps.log.child({ component: 'mcp' }), config: () => ctx.config.current(),
    contextRoot: ctx.realm.contextRoot, clientInfo: { name: 'warren', version: WARREN_VERSION },
  });
  return {
    name: 'mcp',
    routes: MCP_ROUTES,
    handlers: mcpHandlers(live, ctx.realm.realmId),
    tools: { tools: ({ sessionId }) => live.toolsAtBoundary(sessionId) },
    capabilities: [{ id: 'mcp_live' }],
    close: () => live.close(),
  };
}
