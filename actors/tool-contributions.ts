// actors/tool-contributions.ts: the tools module units add to agent sessions (schedule tools, workgraph
// tools, comms, memory, MCP, mob, skills). A module registers one contribution (http/module-unit.ts); the
// session kind asks for the tools of one session each time it builds that session's tool set.
import type { Tool } from '../tools/tool.ts';

/**
 * Tools a module adds to sessions. `tools` is asked once per toolset build with the session's id and
 * settings and returns the tools that session gets (often none).
 */
export interface ToolContribution {
  owner: string;
  tools(session: { sessionId: string; settings: Readonly<Record<string, unknown>> }): readonly Tool[];
}

export class ToolContributions {
  private readonly contributions: ToolContribution[] = [];

  add(contribution: ToolContribution): void {
    this.contributions.push(contribution);
  }

  /** Tools every contributing module offers this session, in registration order. */
  forSession(sessionId: string, settings: Readonly<Record<string, unknown>>): Tool[] {
    // Asked on every turn: one argument object and one array, no per-module intermediate arrays.
    const session = { sessionId, settings };
    const out: Tool[] = [];
    for (const c of this.contributions) {
      const tools = c.tools(session);
      for (let i = 0; i < tools.length; i++) out.push(tools[i]);
    }
    return out;
  }
}
