// tools/tool.ts: the agent tool interface. tools/registry.ts builds a session's tool set; the turn
// runner dispatches calls through it.
import type { ToolSpec } from '../contracts/tool.ts';

export interface ToolContext {
  sessionId: string;
  /** Directory tools treat as the project root (--context-root). */
  contextRoot: string;
  signal: AbortSignal;
}

export interface ToolOutcome {
  content: string;
  is_error?: boolean;
  /** Set when the tool hit its own time limit (emits tool_execution_timed_out). */
  timed_out?: { timeout_ms: number };
}

export interface Tool extends ToolSpec {
  execute(args: unknown, ctx: ToolContext): Promise<ToolOutcome>;
}
