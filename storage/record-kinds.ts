// storage/record-kinds.ts: every generic record (Store.getRecord / listRecords) is read through here.
// A record kind names its namespace (or namespace prefix), its typebox schema and its version; an older
// version is brought forward by the kind's named migrations, then the record is validated. A record
// that does not match is refused with SESSION_STORE_ERROR naming the namespace and key (logged once per
// record), rather than served half-understood, the way storage/record-migrations.ts treats sessions.
import type { Static, TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { ServiceError } from '../contracts/errors.ts';
import { FlowRunRecord, MobRecord } from '../contracts/mob.ts';
import { DeliveryRecord } from '../contracts/webhooks.ts';
import { BindingChainRecord, BindingKeyRecord, WorkBindingRecord } from '../contracts/work-binding.ts';
import { RECORDING_PRUNED_NS, RecordingPruned, ReplayReport, TurnRecording } from '../contracts/replay.ts';
import * as S from '../contracts/stored-records.ts';
import type { Store } from './store.ts';

/** A record kind: where it lives, what it must look like, how older versions move forward. */
export interface RecordKind<T> {
  /** Short name used in errors and logs. */
  readonly name: string;
  /** The namespace, or (`prefix: true`) the prefix of a family of namespaces (one per session, schedule...). */
  readonly ns: string;
  readonly prefix: boolean;
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
  prefix?: boolean;
  schema: S;
  version?: number;
  migrations?: Record<number, (r: never) => unknown>;
}): RecordKind<Static<S>> {
  if (KINDS.has(o.ns)) throw new Error(`record kind for namespace ${o.ns} defined twice`);
  const compiled = Compile(o.schema);
  const kind: RecordKind<Static<S>> = {
    name: o.name,
    ns: o.ns,
    prefix: o.prefix ?? false,
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
function setCorruptRecordLog(fn: Log): void {
  log = fn;
}

function nsOf(kind: RecordKind<unknown>, suffix: string | undefined): string {
  if (!kind.prefix) return kind.ns;
  if (suffix === undefined) throw new Error(`record kind ${kind.name} needs a namespace suffix`);
  return kind.ns + suffix;
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
 * One record of `kind` (undefined when absent), migrated and validated. `suffix` completes a prefix
 * namespace. `T` is the owner's declared type of the record (the schema checks the fields it relies on).
 */
export async function readRecord<T = unknown>(
  store: Store,
  kind: RecordKind<unknown>,
  key: string,
  suffix?: string,
): Promise<T | undefined> {
  const ns = nsOf(kind, suffix);
  const raw = await store.getRecord<unknown>(ns, key);
  return raw === undefined ? undefined : (validateRecord(kind, ns, key, raw) as T);
}

/** Every record of `kind` in key order, each migrated and validated. */
export async function readRecords<T = unknown>(
  store: Store,
  kind: RecordKind<unknown>,
  suffix?: string,
): Promise<Array<{ key: string; value: T }>> {
  const ns = nsOf(kind, suffix);
  const rows = await store.listRecords<unknown>(ns);
  return rows.map((r) => ({ key: r.key, value: validateRecord(kind, ns, r.key, r.value) as T }));
}

// ---- the kinds ----

export const SCHEDULE_KIND = defineRecordKind({ name: 'schedule', ns: 'schedule', schema: S.StoredSchedule });
export const OCCURRENCE_KIND = defineRecordKind({
  name: 'schedule occurrence',
  ns: 'schedule-occ:',
  prefix: true,
  schema: S.StoredOccurrence,
});
export const AUTH_PROFILE_KIND = defineRecordKind({ name: 'auth profile', ns: 'auth.profiles', schema: S.StoredAuthProfile });
export const AUTH_BINDING_KIND = defineRecordKind({ name: 'auth binding', ns: 'auth.bindings', schema: S.StoredAuthBinding });
export const AUTH_SECRET_KIND = defineRecordKind({ name: 'sealed secret', ns: 'auth.secrets', schema: S.StoredSealed });
export const AUTH_LOGIN_KIND = defineRecordKind({ name: 'pending login', ns: 'auth.logins', schema: S.StoredPendingLogin });
export const COMPACTION_KIND = defineRecordKind({ name: 'compaction', ns: 'compaction', schema: S.StoredCompaction });
export const DETACHED_KIND = defineRecordKind({ name: 'detached request', ns: 'detached_request', schema: S.StoredDetachedRequest });
export const PROTOCOL_TURN_KIND = defineRecordKind({ name: 'protocol turn', ns: 'protocol_turn', schema: S.StoredProtocolTurn });
export const MCP_PERSISTED_KIND = defineRecordKind({ name: 'MCP persisted', ns: 'mcp', schema: S.StoredMcpPersisted });
export const QUEUED_TURN_KIND = defineRecordKind({ name: 'queued turn', ns: 'busy_queue', schema: S.StoredQueuedTurn });
export const WEBHOOK_SUBSCRIPTION_KIND = defineRecordKind({
  name: 'webhook subscription',
  ns: 'webhook_subscription',
  schema: S.StoredWebhookSubscription,
});
export const WEBHOOK_DELIVERY_KIND = defineRecordKind({
  name: 'webhook delivery',
  ns: 'webhook_delivery:',
  prefix: true,
  schema: DeliveryRecord,
});
export const REPLAY_REPORT_KIND = defineRecordKind({ name: 'replay report', ns: 'replay.report', schema: ReplayReport });
export const TURN_RECORDING_KIND = defineRecordKind({ name: 'turn recording', ns: 'recording:', prefix: true, schema: TurnRecording });
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
