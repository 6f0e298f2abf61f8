// contracts/mob-rpc.ts: params of the JSON-RPC 2.0 methods of POST /rpc (and the mob agent tools,
// which call the same commands). One schema per method; docs/mobs.md lists them with their scopes.
import { Type, type Static, type TSchema } from 'typebox';
import { ExpectedGeneration, ExpectedRevision, MemberSpec, MobDefinition, MobName, MobScopeSchema } from './mob.ts';
import { ForkContext } from './routes-mob.ts';
import { ProviderId } from './session.ts';

const MobId = { mob_id: Type.String({ minLength: 1 }) };
const Fenced = { ...MobId, expected_revision: Type.Optional(ExpectedRevision) };
const Member = { ...Fenced, agent_identity: MobName, expected_generation: Type.Optional(ExpectedGeneration) };
const Filter = Type.Object(
  {
    mob_id: Type.Optional(Type.String()),
    kinds: Type.Optional(Type.Array(Type.String(), { maxItems: 32 })),
    agent_identity: Type.Optional(Type.String()),
    run_id: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
const Helper = {
  ...MobId,
  prompt: Type.String({ minLength: 1 }),
  result_label: Type.String({ minLength: 1 }),
  max_text_bytes: Type.Integer({ minimum: 1, maximum: 1_048_576 }),
  agent_identity: MobName,
  role_name: Type.Optional(Type.String({ minLength: 1 })),
  model_override: Type.Optional(Type.String({ minLength: 1 })),
  provider: Type.Optional(ProviderId),
};

export const RPC_PARAMS = {
  'mob/create': Type.Object({
    mob_id: Type.Optional(MobName),
    labels: Type.Optional(Type.Record(Type.String(), Type.String())),
    definition: Type.Optional(MobDefinition),
  }),
  'mob/destroy': Type.Object(Fenced),
  'mob/get': Type.Object(MobId),
  'mob/list': Type.Object({}),
  'mob/spawn_member': Type.Object({ ...Fenced, member: MemberSpec, wait: Type.Optional(Type.Boolean()) }),
  'mob/retire_member': Type.Object(Member),
  'mob/cancel_member': Type.Object(Member),
  'mob/respawn_member': Type.Object({ ...Member, initial_message: Type.Optional(Type.String({ minLength: 1 })) }),
  'mob/wire_members': Type.Object({
    ...Fenced,
    edges: Type.Array(Type.Object({ a: MobName, b: MobName }), { minItems: 1, maxItems: 512 }),
  }),
  'mob/unwire_members': Type.Object({ ...Fenced, a: MobName, b: MobName }),
  'mob/send_message': Type.Object({ ...Member, prompt: Type.String({ minLength: 1 }) }),
  'mob/start_flow': Type.Object({
    ...MobId,
    flow_id: MobName,
    run_id: Type.Optional(MobName),
    activation: Type.Optional(Type.Unknown()),
    run_labels: Type.Optional(Type.Record(Type.String(), Type.String())),
  }),
  'mob/flow_status': Type.Object({ ...MobId, run_id: MobName }),
  'mob/cancel_flow': Type.Object({ ...MobId, run_id: MobName }),
  'mob/spawn_helper': Type.Object(Helper),
  'mob/fork_helper': Type.Object({ ...Helper, source_member_id: MobName, fork_context: Type.Optional(ForkContext) }),
  'mob/grants/set': Type.Object({
    principal: Type.String({ minLength: 1 }),
    scopes: Type.Array(MobScopeSchema, { maxItems: 16 }),
    expires_at_ms: Type.Optional(Type.Integer({ minimum: 0 })),
  }),
  'mob/grants/revoke': Type.Object({ principal: Type.String({ minLength: 1 }) }),
  'mob/grants/list': Type.Object({}),
  'mob/runtime_status': Type.Object({}),
  'toolkit/mob_events/query': Type.Object({
    after_cursor: Type.Optional(Type.Integer({ minimum: 0 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    filter: Type.Optional(Filter),
  }),
  'toolkit/mob_events/subscribe': Type.Object({ after_cursor: Type.Optional(Type.Integer({ minimum: 0 })), filter: Type.Optional(Filter) }),
  'toolkit/mob_events/normalize': Type.Object({ lines: Type.Array(Type.String(), { maxItems: 10_000 }) }),
} satisfies Record<string, TSchema>;

export type RpcMethod = keyof typeof RPC_PARAMS;
export type RpcParams<M extends RpcMethod> = Static<(typeof RPC_PARAMS)[M]>;
const RPC_METHODS = Object.keys(RPC_PARAMS) as RpcMethod[];
