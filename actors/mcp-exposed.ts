// actors/mcp-exposed.ts: the tools Warren offers to MCP clients on its own MCP endpoint. Every module
// registers into the one registry of its runtime, `exposedTools(ctx.supervisor).register(...)` (sessions
// today; schedules and WorkGraph flows the same way), in any module order: the endpoint lists the registry
// per request. http/handlers/mcp-endpoint.ts lists and calls them through the MCP SDK server.
// On a cluster a tool that acts on a leased resource (it names one through owner()) runs on the node
// holding that resource: the call is routed there as an internal call (MCP_TOOL_CALL, OwnerCalls), which
// runs the same tool on that node and returns its result; nobody holding it, the call runs here.
import { Compile } from 'typebox/compile';
import type { TSchema } from 'typebox';
import { isServiceError } from '../contracts/errors.ts';
import type { OwnerCalls } from './cluster/owner-calls.ts';
import type { Supervisor } from './supervisor.ts';

/** The internal call that runs an exposed tool on the node holding the resource it acts on. */
const MCP_TOOL_CALL = 'mcp.tool';

/** A tool result: text for the model, optional structured content, and whether it is an error. */
export interface ExposedResult {
  text: string;
  structured?: Record<string, unknown>;
  is_error?: boolean;
}

export interface ExposedTool {
  /** `warren_<area>_<verb>` (ARCHITECTURE.md "Names"). */
  name: string;
  description: string;
  /** JSON Schema of the arguments (a typebox schema is one). */
  input_schema: TSchema;
  call(args: unknown, ctx: { signal: AbortSignal }): Promise<ExposedResult>;
  /** The leased resource (a mob, a work binding) the call acts on; on a cluster it runs on that resource's node. */
  owner?(args: unknown): { kind: string; id: string } | undefined;
}

interface Entry {
  tool: ExposedTool;
  /** The argument check, compiled on the tool's first call (an idle server holds none). */
  check?: ReturnType<typeof Compile>;
}

export class ExposedTools {
  private readonly tools = new Map<string, Entry>();

  /** `calls`: the cluster's routing (postgres realms); it also serves MCP_TOOL_CALL from peers. */
  constructor(private readonly calls?: OwnerCalls) {
    calls?.handle(MCP_TOOL_CALL, async (body) => {
      const b = (body ?? {}) as { name?: unknown; args?: unknown };
      return this.run(String(b.name), b.args, { signal: new AbortController().signal }, false);
    });
  }

  /** Adds tools; a name registered twice is a wiring bug and throws. */
  register(...tools: ExposedTool[]): void {
    for (const tool of tools) {
      if (this.tools.has(tool.name)) throw new Error(`exposed MCP tool registered twice: ${tool.name}`);
      this.tools.set(tool.name, { tool });
    }
  }

  list(): Array<{ name: string; description: string; inputSchema: Record<string, unknown> }> {
    return [...this.tools.values()].map(({ tool }) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: plainSchema(tool.input_schema),
    }));
  }

  /** Runs a tool (on the node holding what it acts on). Never rejects: unknown names, bad arguments and failures are error results. */
  call(name: string, args: unknown, ctx: { signal: AbortSignal }): Promise<ExposedResult> {
    return this.run(name, args, ctx, true);
  }

  private async run(name: string, args: unknown, ctx: { signal: AbortSignal }, route: boolean): Promise<ExposedResult> {
    const entry = this.tools.get(name);
    if (!entry) return { text: `unknown tool: ${name}`, is_error: true };
    const input = args ?? {};
    const check = (entry.check ??= Compile(entry.tool.input_schema));
    if (!check.Check(input)) {
      const [first] = check.Errors(input);
      return {
        text: `invalid arguments for ${name}: ${first ? `${first.instancePath || '/'} ${first.message}` : 'schema mismatch'}`,
        is_error: true,
      };
    }
    try {
      const owner = route && this.calls ? entry.tool.owner?.(input) : undefined;
      if (owner) return await this.calls!.callOn<ExposedResult>(owner, MCP_TOOL_CALL, { name, args: input }, ctx.signal);
      return await entry.tool.call(input, ctx);
    } catch (err) {
      const body = isServiceError(err)
        ? { error: err.message, code: err.code, ...(err.details !== undefined ? { details: err.details } : {}) }
        : { error: err instanceof Error ? err.message : String(err), code: 'INTERNAL_ERROR' };
      return { text: JSON.stringify(body), structured: body, is_error: true };
    }
  }
}

/** The schema as plain JSON (typebox values carry symbol keys and may hold an $id). */
function plainSchema(schema: TSchema): Record<string, unknown> {
  const plain = JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
  delete plain.$id;
  return plain;
}

const registries = new WeakMap<Supervisor, ExposedTools>();

/** The registry of MCP-exposed tools of one runtime (created on first use). */
export function exposedTools(runtime: Supervisor): ExposedTools {
  let registry = registries.get(runtime);
  if (!registry) registries.set(runtime, (registry = new ExposedTools(runtime.deps.ownerCalls)));
  return registry;
}
