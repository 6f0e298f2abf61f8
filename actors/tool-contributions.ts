// actors/tool-contributions.ts: the tools module units add to agent sessions (schedule tools, workgraph
// tools, skills, comms, memory, MCP, mob, remote A2A agents). A module declares its contribution once at
// start-up (http/module-unit.ts): fixed tools, or a tool source owned by its subsystem, and the session
// setting or capability that switches it on. Building a session's tool set looks these up; it calls no
// module code, only the sources of the subsystems a session has switched on.
import type { SessionSettings } from '../contracts/records.ts';
import type { Tool } from '../tools/tool.ts';

/** A session setting that switches a contribution on: `true`, or any value for the object and name settings. */
type SessionToolFlag = 'schedule' | 'workgraph' | 'builtins' | 'memory' | 'comms_name' | 'mob_member';

/** Tools that depend on the session (bound to its id or settings) or follow the live config. */
export interface ToolSource {
  toolsFor(sessionId: string, settings: SessionSettings): readonly Tool[];
}

/** What one module offers sessions, declared once. */
export interface ToolContribution {
  owner: string;
  /** Offered only to sessions with this setting on; absent: every session. */
  flag?: SessionToolFlag;
  /** Offered only while this capability is Available (the live config may switch it off). */
  capability?: string;
  /** Fixed tools (built once at start-up), or the subsystem's source of per-session tools. */
  tools: readonly Tool[] | ToolSource;
}

function flagOn(settings: SessionSettings, flag: SessionToolFlag): boolean {
  const value = settings[flag];
  return value === true || (typeof value !== 'boolean' && value !== undefined && value !== '');
}

export class ToolContributions {
  private readonly contributions: ToolContribution[] = [];

  /** `available(id)`: whether a capability is Available now (the capability registry's answer). */
  constructor(private readonly available: (capability: string) => boolean) {}

  add(contribution: ToolContribution): void {
    if (this.contributions.some((c) => c.owner === contribution.owner)) throw new Error(`tools contributed twice by ${contribution.owner}`);
    this.contributions.push(contribution);
  }

  /** Tools the contributions switched on for this session offer it, in registration order. */
  forSession(sessionId: string, settings: SessionSettings): Tool[] {
    const out: Tool[] = [];
    for (const c of this.contributions) {
      if (c.flag !== undefined && !flagOn(settings, c.flag)) continue;
      if (c.capability !== undefined && !this.available(c.capability)) continue;
      const tools = isSource(c.tools) ? c.tools.toolsFor(sessionId, settings) : c.tools;
      for (let i = 0; i < tools.length; i++) out.push(tools[i]);
    }
    return out;
  }
}

function isSource(tools: ToolContribution['tools']): tools is ToolSource {
  return !Array.isArray(tools);
}
