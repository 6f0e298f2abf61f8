// contracts/stored-records.ts: schemas of the generic records (Store putRecord/getRecord) Warren keeps,
// one per record kind. Every kind is read through storage/record-kinds.ts, which migrates an older
// version and refuses a record that does not match (SESSION_STORE_ERROR naming namespace and key).
// The schemas check each record's envelope (the fields its reader relies on); they leave extra members
// alone, so the stored shapes are exactly what earlier versions wrote.
import { Type, type Static } from 'typebox';
import { ExternalWorkRef, WorkAttentionBinding, WorkEdge, WorkEvent, WorkOwner, WorkPriority } from './workgraph.ts';

const V1 = Type.Literal(1);
const Int = Type.Integer();
const Str = Type.String();
const Opt = Type.Optional;

/** A value sealed with the realm key (AES-256-GCM). */
export const StoredSealed = Type.Object({ v: V1, iv: Str, tag: Str, data: Str });

/** ns `schedule`, key = schedule id. */
export const StoredSchedule = Type.Object({
  v: V1,
  rev: Int,
  schedule: Type.Object({ schedule_id: Str }),
  machine: Type.Object({ value: Type.Unknown(), context: Type.Object({ scheduleId: Str, revision: Int }) }),
});
/** ns `schedule-occ:<schedule id>`, key = zero-padded ordinal. */
export const StoredOccurrence = Type.Object({
  v: V1,
  rev: Int,
  due_ms: Type.Number(),
  lease_ms: Opt(Type.Number()),
  session_id: Opt(Str),
  occ: Type.Object({ occurrence_id: Str, schedule_id: Str, occurrence_ordinal: Int, phase: Str }),
});

/** ns `auth.profiles`. */
export const StoredAuthProfile = Type.Object({
  v: V1,
  id: Str,
  provider: Str,
  auth_method: Str,
  has_secret: Type.Boolean(),
  has_refresh_token: Type.Boolean(),
  released_at_ms: Opt(Type.Number()),
  expires_at_ms: Opt(Type.Number()),
  last_refresh_at_ms: Opt(Type.Number()),
  account_id: Opt(Str),
  scopes: Opt(Type.Array(Str)),
  refresh_error: Opt(Type.Union([Type.Literal('reauth'), Type.Literal('failed')])),
});
/** ns `auth.bindings`. */
export const StoredAuthBinding = Type.Object({ v: V1, id: Str, backend_profile: Str, auth_profile: Str });
/** ns `auth.logins`. */
export const StoredPendingLogin = Type.Object({
  v: V1,
  kind: Type.Union([Type.Literal('pkce'), Type.Literal('device')]),
  provider: Str,
  binding_id: Str,
  profile_id: Type.Union([Str, Type.Null()]),
  redirect_uri: Opt(Str),
  verifier: Opt(StoredSealed),
  expires_at_ms: Type.Number(),
});

/** ns `compaction`, key = session id. */
export const StoredCompaction = Type.Object({
  v: V1,
  count: Int,
  last_at_ms: Type.Number(),
  messages_before: Int,
  messages_after: Int,
  tokens_before: Type.Number(),
  tokens_after: Type.Number(),
});

/** ns `detached_request`, key = request id. */
export const StoredDetachedRequest = Type.Object({
  v: V1,
  request_id: Str,
  session_id: Str,
  kind: Type.Union([Type.Literal('create'), Type.Literal('continue')]),
  status: Str,
  boot: Str,
  created_ms: Type.Number(),
  first_seq: Opt(Int),
  finished_ms: Opt(Type.Number()),
  response: Opt(Type.Unknown()),
  error: Opt(Type.Object({ status: Int, body: Type.Record(Str, Type.Unknown()) })),
});

/** ns `protocol_turns:<session id>`, key = protocol-turn record id: the session's protocol turns (A2A ListTasks). */
export const StoredProtocolTurnRef = Type.Object({ v: V1, id: Str, protocol: Str, created_ms: Type.Number() });

/** ns `protocol_turn`, key = protocol response id. */
export const StoredProtocolTurn = Type.Object({
  v: V1,
  id: Str,
  protocol: Str,
  session_id: Str,
  first_seq: Int,
  status: Type.Union(['in_progress', 'completed', 'failed', 'cancelled'].map((s) => Type.Literal(s))),
  boot: Str,
  created_ms: Type.Number(),
  finished_ms: Opt(Type.Number()),
  reply: Opt(Type.Object({ text: Str, turns: Int, tool_calls: Int, usage: Type.Unknown() })),
  error: Opt(Type.Object({ code: Str, message: Str })),
  meta: Opt(Type.Record(Str, Type.Unknown())),
});

/** ns `mcp`, key = session id. */
export const StoredMcpPersisted = Type.Object({
  v: V1,
  added: Type.Array(Type.Object({ name: Str })),
  removed: Type.Array(Str),
});

/** ns `busy_queue`, key = `<session id>/<seq>`. */
export const StoredQueuedTurn = Type.Object({
  v: V1,
  session_id: Str,
  seq: Int,
  request_id: Str,
  policy: Type.Union([Type.Literal('enqueue'), Type.Literal('steer')]),
  detached: Type.Boolean(),
  created_ms: Type.Number(),
  body: Type.Object({}),
});

/** ns `webhook_subscription` (see actors/webhooks), key = subscription id. */
export const StoredWebhookSubscription = Type.Object({
  v: V1,
  id: Str,
  url: Str,
  events: Type.Array(Str),
  session_labels: Opt(Type.Record(Str, Str)),
  secret: Opt(Str),
  sealed_secret: Opt(StoredSealed),
  secret_env: Opt(Str),
  created_ms: Type.Number(),
});

/** ns `mob.meta`, keys `head`, `projected`, `floor`: a cursor of the mob ledger. */
export const StoredMobCursor = Type.Object({ v: V1, cursor: Int });

/** ns `inbound.key_usage`, key = API key id: when the key was last used (epoch ms). */
export const StoredKeyUsage = Type.Number();

/**
 * ns `inbound.cluster`, key `secret`: the realm's cluster secret (32 bytes, base64), `sealed` with the realm key;
 * `secret` in the clear only as an older Warren wrote it (resealed on first read); `v` since it was validated.
 */
export const StoredClusterSecret = Type.Object({ v: Opt(V1), rev: Opt(Int), secret: Opt(Str), sealed: Opt(StoredSealed) });

/**
 * ns `warren.lease`, key `<kind>:<id>`: an ownership lease. `rev` is the fencing token: it grows by one at
 * each change of owner and never goes back (a released lease stays as a tombstone with `node_id: ''`), so a
 * token names one owner's term. `pid` and `host`: the owner's process (file backends: a lease of a
 * process gone from this host is free).
 */
export const StoredLease = Type.Object({
  v: V1,
  rev: Int,
  node_id: Str,
  url: Str,
  expires_at_ms: Type.Number(),
  pid: Opt(Int),
  host: Opt(Str),
});
export type StoredLease = Static<typeof StoredLease>;

/** ns `warren.node` (lmdb and sqlite clusters), key = node id: where a node is reached and its heartbeat. */
export const StoredClusterNode = Type.Object({
  v: V1,
  url: Str,
  started_ms: Type.Number(),
  heartbeat_ms: Type.Number(),
  info: Type.Unknown(),
});
export type StoredClusterNode = Static<typeof StoredClusterNode>;

/** ns `memory:<session id>`, key = document id: one durable memory document (what compaction discarded). */
export const StoredMemoryDoc = Type.Object({
  v: V1,
  id: Str,
  role: Type.Union([Type.Literal('user'), Type.Literal('assistant'), Type.Literal('tool_results')]),
  text: Str,
  created_at: Str,
  embedding: Opt(Type.Array(Type.Number())),
});
export type StoredMemoryDoc = Static<typeof StoredMemoryDoc>;

/** ns `langgraph_thread`, key = thread id: a thread reserved by POST /threads before its first run. */
export const StoredLangGraphThread = Type.Object({
  v: Opt(V1),
  thread_id: Str,
  created_ms: Type.Number(),
  metadata: Type.Record(Str, Type.Unknown()),
});
export type StoredLangGraphThread = Static<typeof StoredLangGraphThread>;

// ---- the WorkGraph (actors/workgraph/wg-records.ts): per namespace items, edges, events, attention; one head

/** The item fields the host owns (the machine owns status, claim, revision, evidence). */
export const WorkItemFields = Type.Object({
  id: Str,
  title: Str,
  description: Opt(Str),
  priority: WorkPriority,
  labels: Type.Array(Str),
  owner: Opt(WorkOwner),
  due_at: Opt(Str),
  not_before: Opt(Str),
  snoozed_until: Opt(Str),
  created_at: Str,
  updated_at: Str,
  external_refs: Type.Array(ExternalWorkRef),
});
export type WorkItemFields = Static<typeof WorkItemFields>;

/** ns `wg/<namespace>/items`, key = item id: the item's fields and its persisted machine snapshot (outcome dropped). */
export const StoredWorkItem = Type.Object({
  v: V1,
  fields: WorkItemFields,
  machine: Type.Object({ value: Str, context: Type.Object({ revision: Int }, { additionalProperties: true }) }),
});
export type StoredWorkItem = Static<typeof StoredWorkItem>;
/** ns `wg/<namespace>/edges`, key = `<from>|<kind>|<to>`. */
export const StoredWorkEdge = Type.Object({ v: V1, edge: WorkEdge });
/** ns `wg/<namespace>/events`, key = zero-padded seq. */
export const StoredWorkEvent = Type.Object({ v: V1, event: WorkEvent });
/** ns `wg/<namespace>/attention`, key = binding id. */
export const StoredWorkAttention = Type.Object({ v: V1, binding: WorkAttentionBinding });
/**
 * ns `wg/meta`, key = namespace: the namespace head. `next_lease_due_ms`: earliest live lease, so a
 * restarted server re-arms the namespace's lease timer. `rev`: the namespace's head revision, bumped by
 * every commit and checked by the next (absent on records written before it existed): two processes
 * hosting one namespace can never both commit over one state.
 */
export const StoredWorkMeta = Type.Object({
  v: V1,
  seq: Type.Integer({ minimum: 0 }),
  next_lease_due_ms: Opt(Type.Number()),
  rev: Opt(Type.Integer({ minimum: 1 })),
});
export type StoredWorkMeta = Static<typeof StoredWorkMeta>;
