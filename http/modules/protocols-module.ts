// http/modules/protocols-module.ts: foreign agent protocols over Warren sessions, as one module unit:
// the OpenAI Responses API (/v1/responses) and the LangGraph Agent Protocol (/assistants, /threads), AG-UI and A2A (/a2a). Each protocol has its own mapping layer
// (actors/protocols/<protocol>/) and handlers (http/handlers/protocols/); they share the durable
// protocol-turn records (actors/protocols/protocol-turns.ts) and the lossless event feed
// (actors/protocols/turn-feed.ts). `[a2a.remotes]` makes remote A2A agents tools of every session
// (actors/protocols/a2a/a2a-remotes.ts). See docs/protocols.md.
import { A2aRemotes } from '../../actors/protocols/a2a/a2a-remotes.ts';
import { LangGraphThreads } from '../../actors/protocols/langgraph/langgraph-threads.ts';
import { ProtocolTurns } from '../../actors/protocols/protocol-turns.ts';
import { A2A_ROUTES } from '../../contracts/routes-a2a.ts';
import { LANGGRAPH_ROUTES } from '../../contracts/routes-langgraph.ts';
import { PROTOCOL_ROUTES } from '../../contracts/routes-protocols.ts';
import { a2aHandlers } from '../handlers/protocols/a2a.ts';
import { agUiHandlers } from '../handlers/protocols/ag-ui.ts';
import { langgraphHandlers } from '../handlers/protocols/langgraph.ts';
import { openaiResponsesHandlers } from '../handlers/protocols/openai-responses.ts';
import type { ModuleContext, ModuleUnit } from '../module-unit.ts';

export function protocolsModule(ctx: ModuleContext): ModuleUnit {
  const sessions = ctx.sessions();
  const turns = new ProtocolTurns(sessions, ctx.supervisor.deps.store, ctx.clock('protocols'));
  const remotes = new A2aRemotes({
    config: ctx.supervisor.deps.config,
    env: ctx.env,
    fetch: ctx.supervisor.deps.outbound?.fetch ?? globalThis.fetch,
  });
  return {
    name: 'protocols',
    configKeys: ['a2a'],
    tools: { tools: remotes },
    routes: [...PROTOCOL_ROUTES, ...LANGGRAPH_ROUTES, ...A2A_ROUTES],
    handlers: {
      ...openaiResponsesHandlers(sessions, turns),
      ...langgraphHandlers(sessions, turns, new LangGraphThreads(ctx.supervisor.deps.store)),
      ...agUiHandlers(sessions, turns),
      ...a2aHandlers(sessions, turns, () => ctx.baseUrl()),
    },
  };
}
