// client/src/event-kinds.ts: the session event kinds this client knows at run time (the types come from
// Warren's contracts; this list is checked against them at compile time both ways, so it cannot drift).
import type { SessionEventKind } from './types.ts';

const KNOWN = [
  'run_started',
  'run_completed',
  'run_failed',
  'budget_warning',
  'turn_started',
  'turn_completed',
  'text_delta',
  'text_complete',
  'reasoning_delta',
  'retrying',
  'tool_call_requested',
  'tool_execution_started',
  'tool_execution_timed_out',
  'tool_execution_completed',
  'tool_result_received',
  'mcp_server_status',
  'mcp_changes_applied',
  'hook_started',
  'hook_completed',
  'hook_failed',
  'hook_denied',
  'extraction_succeeded',
  'extraction_failed',
  'schedule_triggered',
  'skills_resolved',
  'skill_resolution_failed',
  'compaction_started',
  'compaction_completed',
  'compaction_failed',
  'memory_indexed',
  'replay_progress',
] as const satisfies readonly SessionEventKind[];

// Every contract kind is listed (a kind added to the contracts without this list fails to compile).
type Missing = Exclude<SessionEventKind, (typeof KNOWN)[number]>;
const complete: [Missing] extends [never] ? true : Missing = true;
void complete;

const KNOWN_SET: ReadonlySet<string> = new Set(KNOWN);

/** True when `kind` is a session event kind this client types. */
export function isKnownEvent(kind: string): kind is SessionEventKind {
  return KNOWN_SET.has(kind);
}
