// contracts/stored-records.ts: schemas of the generic records (Store putRecord/getRecord) Warren keeps,
// one per record kind. Every kind is read through storage/record-kinds.ts, which migrates an older
// version and refuses a record that does not match (SESSION_STORE_ERROR naming namespace and key).
// The schemas check each record's envelope (the fields its reader relies on); they leave extra members
// alone, so the stored shapes are exactly what earlier versions wrote.
import { Type, type TSchema } from 'typebox';

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

type StoredSchema = TSchema;
