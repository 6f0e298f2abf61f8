// tools/workgraph-tools.ts: the workgraph_* agent tools (SPEC.md "Other interfaces"). They validate their
// arguments (contracts/workgraph-inputs.ts) and call a WorkGraphToolPort that actors/workgraph implements
// for the calling session; every mutation needs `expected_revision`, and a refusal (stale revision,
// terminal item, policy, edge rule) comes back as an is_error result `{error, code, ...}`.
import { isServiceError } from '../contracts/errors.ts';
import {
  WorkBlockInput,
  WorkClaimInput,
  WorkCloseInput,
  WorkCreateInput,
  WorkEventsInput,
  WorkEvidenceInput,
  WorkGetInput,
  WorkLinkInput,
  WorkListInput,
  WorkReadyInput,
  WorkReleaseInput,
  WorkUpdateInput,
} from '../contracts/workgraph-inputs.ts';
import type { TSchema, Static } from 'typebox';
import { compileArgs, invalidArgs, jsonResult } from './tool-args.ts';
import type { Tool } from './tool.ts';

type In<S extends TSchema> = Static<S>;

/** What the tools need from the WorkGraph, per calling session (actors/workgraph/wg-tool-port.ts). */
export interface WorkGraphToolPort {
  create(sessionId: string, input: In<typeof WorkCreateInput>): Promise<unknown>;
  get(input: In<typeof WorkGetInput>): Promise<unknown>;
  list(input: In<typeof WorkListInput>): Promise<unknown>;
  ready(input: In<typeof WorkReadyInput>): Promise<unknown>;
  snapshot(input: In<typeof WorkListInput>): Promise<unknown>;
  events(input: In<typeof WorkEventsInput>): Promise<unknown>;
  claim(sessionId: string, input: In<typeof WorkClaimInput>): Promise<unknown>;
  release(sessionId: string, input: In<typeof WorkReleaseInput>): Promise<unknown>;
  update(sessionId: string, input: In<typeof WorkUpdateInput>): Promise<unknown>;
  block(sessionId: string, input: In<typeof WorkBlockInput>): Promise<unknown>;
  close(sessionId: string, input: In<typeof WorkCloseInput>): Promise<unknown>;
  link(sessionId: string, input: In<typeof WorkLinkInput>): Promise<unknown>;
  addEvidence(sessionId: string, input: In<typeof WorkEvidenceInput>): Promise<unknown>;
}

function wgTool<S extends TSchema>(
  name: string,
  description: string,
  schema: S,
  run: (input: Static<S>, sessionId: string) => Promise<unknown>,
): Tool {
  const args = compileArgs(schema);
  return {
    name,
    description,
    input_schema: args.jsonSchema,
    async execute(raw, ctx) {
      const parsed = args.parse(raw);
      if (!parsed.ok) return invalidArgs(name, parsed.message);
      try {
        return jsonResult(await run(parsed.value, ctx.sessionId));
      } catch (err) {
        if (!isServiceError(err)) throw err;
        const details = (err.details ?? {}) as Record<string, unknown>;
        const code = typeof details.reason === 'string' ? details.reason : err.code;
        return jsonResult({ error: err.message, code, ...details }, true);
      }
    },
  };
}

/** The thirteen workgraph_* tools over `port`. */
export function createWorkGraphTools(port: WorkGraphToolPort): Tool[] {
  return [
    wgTool(
      'workgraph_create',
      'Create a work item (status open, revision 1). Optional parent_id and blocked_by add edges. Returns the item.',
      WorkCreateInput,
      (i, s) => port.create(s, i),
    ),
    wgTool('workgraph_get', 'Read one work item (with its current revision).', WorkGetInput, (i) => port.get(i)),
    wgTool(
      'workgraph_list',
      'List work items, oldest first: non-terminal ones unless include_terminal, or exactly the given statuses. Returns {items}.',
      WorkListInput,
      async (i) => ({ items: await port.list(i) }),
    ),
    wgTool(
      'workgraph_ready',
      'List ready items (open, unclaimed, no unresolved blocker, not_before/snoozed_until passed), best first. Returns {items}.',
      WorkReadyInput,
      async (i) => ({ items: await port.ready(i) }),
    ),
    wgTool(
      'workgraph_snapshot',
      'Snapshot: items, edges, ready ids, attention, timestamp and the event high-water mark.',
      WorkListInput,
      (i) => port.snapshot(i),
    ),
    wgTool('workgraph_events', 'WorkGraph events with seq > after_seq, oldest first. Returns {events, has_more}.', WorkEventsInput, (i) =>
      port.events(i),
    ),
    wgTool(
      'workgraph_claim',
      'Claim a ready item for this session (optionally with a lease in ms; an expired lease releases the claim). Needs expected_revision.',
      WorkClaimInput,
      (i, s) => port.claim(s, i),
    ),
    wgTool('workgraph_release', 'Release your claim on an item (back to open). Needs expected_revision.', WorkReleaseInput, (i, s) =>
      port.release(s, i),
    ),
    wgTool(
      'workgraph_update',
      'Update fields of an item (title, description, priority, labels, owner, due_at, not_before, snoozed_until, external_refs). Needs expected_revision.',
      WorkUpdateInput,
      (i, s) => port.update(s, i),
    ),
    wgTool(
      'workgraph_block',
      'Mark an item blocked (with a reason), or unblock it with blocked=false. Needs expected_revision.',
      WorkBlockInput,
      (i, s) => port.block(s, i),
    ),
    wgTool(
      'workgraph_close',
      "Close an item as completed, cancelled or failed. Completion is gated by the item's completion policy. Needs expected_revision.",
      WorkCloseInput,
      (i, s) => port.close(s, i),
    ),
    wgTool(
      'workgraph_link',
      "Add an edge (blocks, parent, related, supersedes, derived_from) from from_id to to_id. Needs the from item's expected_revision.",
      WorkLinkInput,
      (i, s) => port.link(s, i),
    ),
    wgTool(
      'workgraph_add_evidence',
      'Attach an evidence pointer (kind, id, label, summary; review/supervisor confirmations count toward completion policies). Needs expected_revision.',
      WorkEvidenceInput,
      (i, s) => port.addEvidence(s, i),
    ),
  ];
}
