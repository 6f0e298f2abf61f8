// http/modules/work-bindings-module.ts: work execution bindings as a module unit: the `work_binding`
// actor kind (actors/work-bindings/), the MCP execution tools on Warren's own MCP endpoint, and crash
// recovery at start. It drives the mob runtime and the WorkGraph through the ports their modules publish
// (actors/work-bindings/ports.ts), so it is listed after both in app.ts MODULES; without either it adds
// nothing. Test-only: WARREN_TEST_BINDING_HALT_AT=begun|realizing|running|projecting|evidence makes a
// binding stop for good right after committing that phase (evidence: right after its evidence write) (kill -9 tests); never set it in production.
import { BINDING_KIND } from '../../actors/work-bindings/binding-actor.ts';
import { BindingHost, type HaltPhase } from '../../actors/work-bindings/binding-host.ts';
import { bindingTools } from '../../actors/work-bindings/binding-tools.ts';
import { bindingPorts } from '../../actors/work-bindings/ports.ts';
import { exposedTools } from '../../actors/mcp-exposed.ts';
import type { ModuleContext, ModuleUnit } from '../module-unit.ts';

const HALT_PHASES: readonly string[] = ['begun', 'realizing', 'running', 'projecting', 'evidence'];

export function workBindingsModule(ctx: ModuleContext): ModuleUnit {
  const ports = bindingPorts(ctx.supervisor);
  if (!ports) return { name: 'work-bindings' };
  const halt = ctx.env.WARREN_TEST_BINDING_HALT_AT;
  const host = new BindingHost({
    supervisor: ctx.supervisor,
    ports,
    now: ctx.clock('work_bindings'),
    ...(halt && HALT_PHASES.includes(halt) ? { haltAt: halt as HaltPhase } : {}),
  });
  exposedTools(ctx.supervisor).register(...bindingTools(host));
  return {
    name: 'work-bindings',
    actorKinds: [BINDING_KIND],
    start: () => host.recoverAll(),
  };
}
