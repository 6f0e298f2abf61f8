// tools/registry.ts: builds a session's tool set from the enabled categories (builtins, shell) and
// dispatches the model's tool calls to it. The turn runner calls dispatch; app/handlers resolve the flags.
import type { ToolSpec } from '../contracts/tool.ts';
import { createDatetimeTool } from './datetime-tool.ts';
import { createShellTool, type ShellOptions } from './shell-tool.ts';
import { TaskStore, type RecordStore } from './task-store.ts';
import { createTaskTools } from './task-tools.ts';
import type { Tool, ToolContext, ToolOutcome } from './tool.ts';

/** An invalid tool configuration (e.g. shell without builtins). Callers map it to 400 BAD_REQUEST. */
export class ToolConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolConfigError';
  }
}

/** The tools offered to the model in one session. */
export interface Toolset {
  /** Specs to send to the provider, in a stable order. */
  readonly specs: ToolSpec[];
  get(name: string): Tool | undefined;
  /** Runs a tool call. Never rejects: unknown tools, bad arguments and thrown errors become `is_error`. */
  dispatch(name: string, args: unknown, ctx: ToolContext): Promise<ToolOutcome>;
}

export interface ToolsetOptions {
  builtins: boolean;
  shell: boolean;
  shellOptions?: Pick<ShellOptions, 'program' | 'timeoutSecs' | 'maxOutputChars'>;
  /** The session's records namespace (task list). */
  records: RecordStore;
  clock?: () => Date;
  /** Further tools from other categories (memory, schedule, ...), appended after the builtins. */
  extra?: readonly Tool[];
}

/** Category switches as sent on create/continue requests; null or absent means "use the default". */
export interface ToolFlagsRequest {
  enable_builtins?: boolean | null;
  enable_shell?: boolean | null;
}

/** Factory defaults for the category switches (from config). */
export interface ToolFlagDefaults {
  builtins_enabled: boolean;
  shell_enabled: boolean;
}

function requireBuiltinsForShell(flags: { builtins: boolean; shell: boolean }): void {
  if (flags.shell && !flags.builtins) throw new ToolConfigError('enable_shell requires enable_builtins');
}

/**
 * Resolves the request's switches over the defaults. Throws ToolConfigError when the result would enable
 * shell without builtins (wire-notes §4: shell needs builtins).
 */
export function resolveToolFlags(request: ToolFlagsRequest, defaults: ToolFlagDefaults): { builtins: boolean; shell: boolean } {
  const flags = {
    builtins: request.enable_builtins ?? defaults.builtins_enabled,
    shell: request.enable_shell ?? defaults.shell_enabled,
  };
  requireBuiltinsForShell(flags);
  return flags;
}

/** The spec of each tool object, made once: a tool reused across turns keeps one spec, whose serialised size and wire form the turn path remembers. */
const specs = new WeakMap<Tool, ToolSpec>();
function specOf(tool: Tool): ToolSpec {
  let spec = specs.get(tool);
  if (!spec) {
    spec = { name: tool.name, description: tool.description, input_schema: tool.input_schema };
    specs.set(tool, spec);
  }
  return spec;
}

/** Builds the tool set. Throws ToolConfigError for shell without builtins or for duplicate tool names. */
export function buildToolset(opts: ToolsetOptions): Toolset {
  requireBuiltinsForShell(opts);
  const tools: Tool[] = [];
  if (opts.builtins) {
    const store = new TaskStore(opts.records, opts.clock ? { clock: opts.clock } : {});
    tools.push(...createTaskTools(store), createDatetimeTool(opts.clock ? { clock: opts.clock } : {}));
  }
  if (opts.shell) tools.push(createShellTool(opts.shellOptions));
  tools.push(...(opts.extra ?? []));

  const byName = new Map<string, Tool>();
  for (const tool of tools) {
    if (byName.has(tool.name)) throw new ToolConfigError(`duplicate tool name: ${tool.name}`);
    byName.set(tool.name, tool);
  }
  const specs = tools.map(specOf);

  return {
    specs,
    get: (name) => byName.get(name),
    async dispatch(name, args, ctx) {
      const tool = byName.get(name);
      // The model asked for a tool it was not offered: tell it, do not fail the turn.
      if (tool === undefined) return { content: `unknown tool: ${name}`, is_error: true };
      try {
        return await tool.execute(args, ctx);
      } catch (err) {
        return { content: `tool ${name} failed: ${err instanceof Error ? err.message : String(err)}`, is_error: true };
      }
    },
  };
}
