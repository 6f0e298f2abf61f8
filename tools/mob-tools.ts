// tools/mob-tools.ts: the mob tools a member session offers its model: `delegate` (hand a prompt to
// another member, or to a fresh helper, and get its bounded answer), `mob_members`, `mob_spawn_member`,
// `mob_retire_member`, `mob_wire`, `mob_start_flow` and `mob_flow_status`. They act through a MobToolPort
// bound to the member (actors/mob/mob-tool-port.ts), so tools/ stays below actors/. Member upcalls use
// the agent authority lane: operator scope grants do not gate them.
import { Type, type Static } from 'typebox';
import { compileArgs, invalidArgs, jsonResult } from './tool-args.ts';
import type { Tool, ToolOutcome } from './tool.ts';

export interface MobToolPort {
  delegate(args: { to?: string; prompt: string; max_text_bytes?: number }): Promise<unknown>;
  members(): Promise<unknown>;
  spawn(args: { agent_identity: string; role?: string; instructions?: string; initial_message?: string }): Promise<unknown>;
  retire(args: { agent_identity: string }): Promise<unknown>;
  wire(args: { a: string; b: string }): Promise<unknown>;
  startFlow(args: { flow_id: string; input?: string }): Promise<unknown>;
  flowStatus(args: { run_id: string }): Promise<unknown>;
}

const Name = Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]*$' });
const Delegate = Type.Object(
  {
    to: Type.Optional(Type.String({ description: 'agent identity of another member; omit to spawn a one-off helper' })),
    prompt: Type.String({ minLength: 1 }),
    max_text_bytes: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 1_048_576, description: 'bound on the answer (default 8000 bytes)' }),
    ),
  },
  { additionalProperties: false },
);
const Spawn = Type.Object(
  {
    agent_identity: Name,
    role: Type.Optional(Type.String()),
    instructions: Type.Optional(Type.String()),
    initial_message: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

function tool<T>(name: string, description: string, schema: Parameters<typeof compileArgs>[0], act: (args: T) => Promise<unknown>): Tool {
  const args = compileArgs(schema);
  return {
    name,
    description,
    input_schema: args.jsonSchema,
    async execute(raw): Promise<ToolOutcome> {
      const parsed = args.parse(raw);
      if (!parsed.ok) return invalidArgs(name, parsed.message);
      try {
        return jsonResult(await act(parsed.value as T));
      } catch (err) {
        return { content: `${name} failed: ${err instanceof Error ? err.message : String(err)}`, is_error: true };
      }
    },
  };
}

export function createMobTools(port: MobToolPort): Tool[] {
  return [
    tool(
      'delegate',
      'Hand a prompt to another member of your mob (or to a one-off helper) and get its bounded answer.',
      Delegate,
      (a: Static<typeof Delegate>) => port.delegate(a),
    ),
    tool(
      'mob_members',
      'List the members of your mob: identity, role, state and wiring.',
      Type.Object({}, { additionalProperties: false }),
      () => port.members(),
    ),
    tool('mob_spawn_member', 'Add a member to your mob (a new agent session).', Spawn, (a: Static<typeof Spawn>) => port.spawn(a)),
    tool(
      'mob_retire_member',
      'Retire a member of your mob.',
      Type.Object({ agent_identity: Name }, { additionalProperties: false }),
      (a: { agent_identity: string }) => port.retire(a),
    ),
    tool(
      'mob_wire',
      'Wire two members so they can message each other.',
      Type.Object({ a: Name, b: Name }, { additionalProperties: false }),
      (a: { a: string; b: string }) => port.wire(a),
    ),
    tool(
      'mob_start_flow',
      "Start one of your mob's flows; returns the run (poll mob_flow_status).",
      Type.Object({ flow_id: Name, input: Type.Optional(Type.String()) }, { additionalProperties: false }),
      (a: { flow_id: string; input?: string }) => port.startFlow(a),
    ),
    tool(
      'mob_flow_status',
      'Status and output of a flow run of your mob.',
      Type.Object({ run_id: Name }, { additionalProperties: false }),
      (a: { run_id: string }) => port.flowStatus(a),
    ),
  ];
}
