// storage/record-kinds.ts: every generic record (Store.getRecord / listRecords) is read through here.
// A record kind names its namespace (or a family of namespaces, `*` standing for the part that varies),
// its typebox schema and its version; an older version is brought forward by the kind's named
// migrations, then the record is validated. A record that does not match is refused with
// SESSION_STORE_ERROR naming the namespace and key (logged once per record), rather than served
// half-understood, the way storage/record-migrations.ts treats sessions. Readers that must go on past a
// bad record (start-up sweeps, lookups that fail closed) use readValidRecord(s): the same check and log,
// the record left out.
import type { Static, TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { ServiceError } from '../contracts/errors.ts';
import { CommsAgent, InboundRequest, InboxEntry } from '../contracts/comms.ts';
import { INBOUND_KEYS_NS, InboundKeyRecord } from '../contracts/inbound-auth.ts';
import { FlowRunRecord, GrantRecord, MobEventRecord, MobRecord } from '../contracts/mob.ts';
import { DeliveryRecord } from '../contracts/webhooks.ts';
import { BindingChainRecord, BindingKeyRecord, WorkBindingRecord } from '../contracts/work-binding.ts';
import { RECORDING_PRUNED_NS, RecordingPruned, ReplayReport, TurnRecording } from '../contracts/replay.ts';
import * as S from '../contracts/stored-records.ts';
import type { Store } from './store.ts';

/** A record kind: where it lives, what it must look like, how older versions move forward. */
export interface RecordKind<T> {
  /** Short name used in errors and logs. */
  readonly name: string;
  /**
   * The namespace, or the pattern of a family of namespaces (one per session, schedule...) where `*`
   * stands for the suffix a reader names (the schedule id in `schedule-occ:*`).
   */
  readonly ns: string;
  /** The version current code writes (records without `v` count as version 1). */
  readonly version: number;
  /** Migrations by the version they read: each returns the next version's record. */
  readonly migrations: Readonly<Record<number, (r: never) => unknown>>;
  readonly check: (v: unknown) => v is T;
}

const KINDS = new Map<string, RecordKind<unknown>>();

/** Registers a record kind (one per namespace; a duplicate is a programming error). */
export function defineRecordKind<S extends TSchema>(o: {
  name: string;
  ns: string;
  schema: S;
  version?: number;
  migrations?: Record<number, (r: never) => unknown>;
}): RecordKind<Static<S>> {
  if (KINDS.has(o.ns)) throw new Error(`record kind for namespace ${o.ns} defined twice`);
  const compiled = Compile(o.schema);
  const kind: RecordKind<Static<S>> = {
    name: o.name,
    ns: o.ns,
    version: o.version ?? 1,
    migrations: o.migrations ?? {},
    check: (v: unknown): v is Static<S> => compiled.Check(v),
  };
  KINDS.set(o.ns, kind as RecordKind<unknown>);
  return kind;
}

/** The registered kinds (docs and tests enumerate them). */
export function recordKinds(): ReadonlyArray<RecordKind<unknown>> {
  return [...KINDS.values()];
}

type Log = (fields: { ns: string; key: string; kind: string; reason: string }, msg: string) => void;
let log: Log = (fields, msg) => process.emitWarning(`${msg} ${JSON.stringify(fields)}`, 'WarrenStoreWarning');
const logged = new Set<string>();

/** Where refusals are logged (the server passes its logger at start-up; default: a process warning). */
export function setCorruptRecordLog(fn: Log): void {
  log = fn;
}

/** The namespace a record of `kind` lives in: the kind's own, or its pattern with `suffix` in place of `*`. */
export function namespaceOf(kind: RecordKind<unknown>, suffix?: string): string {
  if (!kind.ns.includes('*')) return kind.ns;
  if (suffix === undefined) throw new Error(`record kind ${kind.name} needs a namespace suffix`);
  return kind.ns.replace('*', () => suffix);
}

/** Migrates and validates one stored value of `kind`; throws SESSION_STORE_ERROR when it does not match. */
function validateRecord<T>(kind: RecordKind<T>, ns: string, key: string, raw: unknown): T {
  let r = raw;
  let reason = 'does not match its schema';
  for (let guard = 0; guard < 64; guard++) {
    if (r === null || typeof r !== 'object') break;
    const v = (r as { v?: unknown }).v ?? 1;
    if (typeof v !== 'number' || v >= kind.version) {
      if (typeof v === 'number' && v > kind.version) reason = `has version ${v}, newer than ${kind.version}`;
      break;
    }
    const step = kind.migrations[v];
    if (!step) {
      reason = `has version ${v} and no migration`;
      break;
    }
    r = step(r as never);
  }
  if (kind.check(r)) return r;
  const id = `${ns}\u0000${key}`;
  if (!logged.has(id)) {
    logged.add(id);
    log({ ns, key, kind: kind.name, reason }, 'stored record refused');
  }
  return refuse(kind, ns, key, reason);
}

function refuse(kind: RecordKind<unknown>, ns: string, key: string, reason: string): never {
  throw new ServiceError('SESSION_STORE_ERROR', `stored ${kind.name} record ${ns}/${key} ${reason}`, { ns, key });
}

/**
 * One record of `kind` (undefined when absent), migrated and validated. `suffix` fills in the `*` of a
 * family's namespace. `T` is the owner's declared type of the record (the schema checks the fields it relies on).
 */
export async function readRecord<T = unknown>(
  store: Store,
  kind: RecordKind<unknown>,
  key: string,
  suffix?: string,
): Promise<T | undefined> {
  const ns = namespaceOf(kind, suffix);
  const raw = await store.getRecord<unknown>(ns, key);
  return raw === undefined ? undefined : (validateRecord(kind, ns, key, raw) as T);
}

/** Every record of `kind` in key order, each migrated and validated. */
export async function readRecords<T = unknown>(
  store: Store,
  kind: RecordKind<unknown>,
  suffix?: string,
): Promise<Array<{ key: string; value: T }>> {
  const ns = namespaceOf(kind, suffix);
  const rows = await store.listRecords<unknown>(ns);
  return rows.map((r) => ({ key: r.key, value: validateRecord(kind, ns, r.key, r.value) as T }));
}

/** True for the refusal of a stored record (so a lenient reader leaves that record out and nothing else). */
function isRefusal(err: unknown): boolean {
  return err instanceof ServiceError && err.code === 'SESSION_STORE_ERROR';
}

/**
 * readRecord for a reader that goes on past a bad record: a record that does not match is logged as
 * refused (once) and answered as absent. For lookups that fail closed (a corrupt API key or scope grant
 * is no key, no grant).
 */
export async function readValidRecord<T = unknown>(
  store: Store,
  kind: RecordKind<unknown>,
  key: string,
  suffix?: string,
): Promise<T | undefined> {
  try {
    return await readRecord<T>(store, kind, key, suffix);
  } catch (err) {
    if (isRefusal(err)) return undefined;
    throw err;
  }
}

/**
 * readRecords for a reader that goes on past a bad record: each record that does not match is logged as
 * refused (once) and left out. For start-up sweeps (recovery, directories) where one corrupt record must
 * not stop the others.
 */
export async function readValidRecords<T = unknown>(
  store: Store,
  kind: RecordKind<unknown>,
  suffix?: string,
): Promise<Array<{ key: string; value: T }>> {
  const ns = namespaceOf(kind, suffix);
  const out: Array<{ key: string; value: T }> = [];
  for (const r of await store.listRecords<unknown>(ns)) {
    try {
      out.push({ key: r.key, value: validateRecord(kind, ns, r.key, r.value) as T });
    } catch (err) {
      if (!isRefusal(err)) throw err;
    }
  }
  return out;
}

// ---- the kinds ----

export const SCHEDULE_KIND = defineRecordKind({ name: 'schedule', ns: 'schedule', schema: S.StoredSchedule });
export const OCCURRENCE_KIND = defineRecordKind({
  name: 'schedule occurrence',
  ns: 'schedule-occ:*',
  schema: S.StoredOccurrence,
});
export const AUTH_PROFILE_KIND = defineRecordKind({ name: 'auth profile', ns: 'auth.profiles', schema: S.StoredAuthProfile });
export const AUTH_BINDING_KIND = defineRecordKind({ name: 'auth binding', ns: 'auth.bindings', schema: S.StoredAuthBinding });
export const AUTH_SECRET_KIND = defineRecordKind({ name: 'sealed secret', ns: 'auth.secrets', schema: S.StoredSealed });
export const AUTH_LOGIN_KIND = defineRecordKind({ name: 'pending login', ns: 'auth.logins', schema: S.StoredPendingLogin });
export const COMPACTION_KIND = defineRecordKind({ name: 'compaction', ns: 'compaction', schema: S.StoredCompaction });
export const DETACHED_KIND = defineRecordKind({ name: 'detached request', ns: 'detached_request', schema: S.StoredDetachedRequest });
export const PROTOCOL_TURN_KIND = defineRecordKind({ name: 'protocol turn', ns: 'protocol_turn', schema: S.StoredProtocolTurn });
export const PROTOCOL_TURN_REF_KIND = defineRecordKind({
  name: 'session protocol turn',
  ns: 'protocol_turns:*',
  schema: S.StoredProtocolTurnRef,
});
export const MCP_PERSISTED_KIND = defineRecordKind({ name: 'MCP persisted', ns: 'mcp', schema: S.StoredMcpPersisted });
export const QUEUED_TURN_KIND = defineRecordKind({ name: 'queued turn', ns: 'busy_queue', schema: S.StoredQueuedTurn });
export const WEBHOOK_SUBSCRIPTION_KIND = defineRecordKind({
  name: 'webhook subscription',
  ns: 'webhook_subscription',
  schema: S.StoredWebhookSubscription,
});
export const WEBHOOK_DELIVERY_KIND = defineRecordKind({
  name: 'webhook delivery',
  ns: 'webhook_delivery:*',
  schema: DeliveryRecord,
});
export const REPLAY_REPORT_KIND = defineRecordKind({ name: 'replay report', ns: 'replay.report', schema: ReplayReport });
export const TURN_RECORDING_KIND = defineRecordKind({ name: 'turn recording', ns: 'recording:*', schema: TurnRecording });
export const RECORDING_PRUNED_KIND = defineRecordKind({ name: 'recording pruned', ns: RECORDING_PRUNED_NS, schema: RecordingPruned });
export const MOB_KIND = defineRecordKind({ name: 'mob', ns: 'mob', schema: MobRecord });
export const FLOW_RUN_KIND = defineRecordKind({ name: 'mob flow run', ns: 'mob.runs', schema: FlowRunRecord });
export const WORK_BINDING_KIND = defineRecordKind({ name: 'work binding', ns: 'work.bindings', schema: WorkBindingRecord });
export const BINDING_CHAIN_KIND = defineRecordKind({ name: 'work binding chain', ns: 'work.binding_chains', schema: BindingChainRecord });
export const BINDING_KEY_KIND = defineRecordKind({
  name: 'work binding idempotency key',
  ns: 'work.binding_keys',
  schema: BindingKeyRecord,
});
export const MOB_GRANT_KIND = defineRecordKind({ name: 'mob scope grant', ns: 'mob.grants', schema: GrantRecord });
export const MOB_EVENT_KIND = defineRecordKind({ name: 'mob ledger event', ns: 'mob.events', schema: MobEventRecord });
export const MOB_CURSOR_KIND = defineRecordKind({ name: 'mob ledger cursor', ns: 'mob.meta', schema: S.StoredMobCursor });
export const WG_ITEM_KIND = defineRecordKind({ name: 'WorkGraph item', ns: 'wg/*/items', schema: S.StoredWorkItem });
export const WG_EDGE_KIND = defineRecordKind({ name: 'WorkGraph edge', ns: 'wg/*/edges', schema: S.StoredWorkEdge });
export const WG_EVENT_KIND = defineRecordKind({ name: 'WorkGraph event', ns: 'wg/*/events', schema: S.StoredWorkEvent });
export const WG_ATTENTION_KIND = defineRecordKind({ name: 'WorkGraph attention', ns: 'wg/*/attention', schema: S.StoredWorkAttention });
export const WG_META_KIND = defineRecordKind({ name: 'WorkGraph namespace head', ns: 'wg/meta', schema: S.StoredWorkMeta });
export const INBOUND_KEY_KIND = defineRecordKind({ name: 'inbound API key', ns: INBOUND_KEYS_NS, schema: InboundKeyRecord });
export const KEY_USAGE_KIND = defineRecordKind({ name: 'API key last use', ns: 'inbound.key_usage', schema: S.StoredKeyUsage });
export const CLUSTER_SECRET_KIND = defineRecordKind({ name: 'cluster secret', ns: 'inbound.cluster', schema: S.StoredClusterSecret });
export const COMMS_AGENT_KIND = defineRecordKind({ name: 'comms agent', ns: 'comms.agents', schema: CommsAgent });
export const COMMS_INBOUND_KIND = defineRecordKind({ name: 'comms inbound request', ns: 'comms.inbound:*', schema: InboundRequest });
export const INBOX_ENTRY_KIND = defineRecordKind({ name: 'inbox entry', ns: 'inbox:*', schema: InboxEntry });
export const LEASE_KIND = defineRecordKind({ name: 'cluster lease', ns: 'warren.lease', schema: S.StoredLease });
export const CLUSTER_NODE_KIND = defineRecordKind({ name: 'cluster node', ns: 'warren.node', schema: S.StoredClusterNode });
export const MEMORY_DOC_KIND = defineRecordKind({ name: 'memory document', ns: 'memory:*', schema: S.StoredMemoryDoc });
export const LANGGRAPH_THREAD_KIND = defineRecordKind({
  name: 'LangGraph thread',
  ns: 'langgraph_thread',
  schema: S.StoredLangGraphThread,
});
