// http/modules/mcp-module.ts: the MCP module. Live MCP tool servers on sessions (the mcp_live capability):
// the /sessions/{id}/mcp routes, `[tools] mcp_servers`, and each session's MCP tools contributed at its
// turn boundary. And Warren as an MCP server: POST/GET/DELETE /mcp exposing the runtime's registry of
// exposed tools (actors/mcp-exposed.ts), starting with the session tools.
import { join } from 'node:path';
import { openRealmKey, REALM_KEY_FILE } from '../../actors/auth/realm-key.ts';
import { exposedTools } from '../../actors/mcp-exposed.ts';
import { sessionExposedTools } from '../../actors/mcp-exposed-sessions.ts';
import { McpLive } from '../../actors/mcp-live.ts';
import { MCP_ROUTES } from '../../contracts/mcp.ts';
import { MCP_ENDPOINT_ROUTES } from '../../contracts/mcp-endpoint.ts';
import { WARREN_VERSION } from '../../contracts/routes-system.ts';
import { mcpHandlers } from '../handlers/mcp.ts';
import { mcpEndpoint } from '../handlers/mcp-endpoint.ts';
import type { ModuleContext, ModuleUnit } from '../module-unit.ts';

export function mcpModule(ctx: ModuleContext): ModuleUnit {
  const { deps } = ctx.supervisor;
  const live = new McpLive({
    sessions: ctx.sessions(),
    store: deps.store,
    log: ctx.log.child({ component: 'mcp' }),
    config: ctx.supervisor.deps.config,
    contextRoot: ctx.realm.contextRoot,
    clientInfo: { name: 'warren', version: WARREN_VERSION },
    fetch: deps.outbound?.fetch,
    ...(ctx.realm.dir ? { cipher: realmCipher(ctx.realm.dir) } : {}),
  });
  deps.sessionMcp = live;
  const registry = exposedTools(ctx.supervisor);
  registry.register(...sessionExposedTools(ctx.sessions(), ctx.realm.realmId));
  const endpoint = mcpEndpoint({ tools: registry, serverInfo: { name: 'warren', version: WARREN_VERSION }, baseUrl: ctx.baseUrl });
  return {
    name: 'mcp',
    routes: [...MCP_ROUTES, ...MCP_ENDPOINT_ROUTES],
    handlers: { ...mcpHandlers(live, ctx.realm.realmId), ...endpoint.handlers },
    tools: { tools: live },
    capabilities: [{ id: 'mcp_live' }],
    close: async () => {
      await live.close();
      await endpoint.close();
    },
  };
}

/** Opens the realm key once, on first use. */
function realmCipher(dir: string): () => ReturnType<typeof openRealmKey> {
  let key: ReturnType<typeof openRealmKey> | undefined;
  return () => (key ??= openRealmKey(join(dir, REALM_KEY_FILE)));
}
