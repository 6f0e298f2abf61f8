// actors/mcp-exposed.ts: the tools Warren offers to MCP clients on its own MCP endpoint. Every module
// registers into the one registry of its runtime, `exposedTools(ctx.supervisor).register(...)` (sessions
// today; schedules and WorkGraph flows the same way), in any module order: the endpoint lists the registry
// per request. http/handlers/mcp-endpoint.ts lists and calls them through the MCP SDK server.
import { Compile } from 'typebox/compile';
import type { TSchema } from 'typebox';
import { isServiceError } from '../contracts/errors.ts';
import type { Supervisor } from './supervisor.ts';

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
}

interface Entry {
  tool: ExposedTool;
  check: ReturnType<typeof Compile>;
}

export class ExposedTools {
  private readonly tools = new Map<string, Entry>();

  /** Adds tools; a name registered twice is a wiring bug and throws. */
  register(...tools: ExposedTool[]): void {
    for (const tool of tools) {
      if (this.tools.has(tool.name)) throw new Error(`exposed MCP tool registered twice: ${tool.name}`);
      this.tools.set(tool.name, { tool, check: Compile(tool.input_schema) });
    }
  }

  list(): Array<{ name: string; description: string; inputSchema: Record<string, unknown> }> {
    return [...this.tools.values()].map(({ tool }) => ({ name: tool.name, description: tool.description, inputSchema: plainSchema(tool.input_schema) }));
  }

  /** Runs a tool. Never rejects: unknown names, bad arguments and failures are error results. */
  async call(name: string, args: unknown, ctx: { signal: AbortSignal }): Promise<ExposedResult> {
    const entry = this.tools.get(name);
    if (!entry) return { text: `unknown tool: ${name}`, is_error: true };
    const input = args ?? {};
    if (!entry.check.Check(input)) {
      const [first] = entry.check.Errors(input);
      return { text: `invalid arguments for ${name}: ${first ? `${first.instancePath || '/'} ${first.message}` : 'schema mismatch'}`, is_error: true };
    }
    try {
      return await entry.tool.call(input, ctx);
    } catch (err) {
      const body = isServiceError(err) ? { error: err.message, code: err.code, ...(err.details !== undefined ? { details: err.details } : {}) } : { error: err instanceof Error ? err.message : String(err), code: 'INTERNAL_ERROR' };
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
  if (!registry) registries.set(runtime, (registry = new ExposedTools()));
  return registry;
}
