// actors/replay/portable.ts: portable sessions. export() writes one versioned JSON Lines file: a header
// line, the session record (its machine snapshot and pending input dropped), the transcript rows, the turn
// recordings and the ledger. Credentials never live in a session record (its auth selector names a
// binding, not a secret); a recorded `hooks_override` may carry them, so its hooks are written by
// reference (hook-summary.ts redactOverride: hashes, no secret). import() validates every line and writes
// the session in one atomic commit.
import { randomBytes } from 'node:crypto';
import { Value } from 'typebox/value';
import { ServiceError } from '../../contracts/errors.ts';
import { LedgerEntry, SessionRecord, type PersistedState } from '../../contracts/records.ts';
import { EXPORT_FORMAT, EXPORT_VERSION, RECORDING_PRUNED_NS, RecordingPruned, recordingNs, TurnRecording } from '../../contracts/replay.ts';
import { Message } from '../../contracts/transcript.ts';
import type { HookRunOverrides } from '../../contracts/turn-features.ts';
import { isHookSummary, keySummary, redactOverride } from './hook-summary.ts';
import { openFeatures } from './sealed-override.ts';
import type { RealmCipher } from '../auth/realm-key.ts';
import { canonicalJson, sha256 } from './canonical.ts';
import type { Store, StoreOp } from '../../storage/store.ts';
import { sessionNotFound } from '../../contracts/errors.ts';
import { readRecord, readRecords, RECORDING_PRUNED_KIND, TURN_RECORDING_KIND } from '../../storage/record-kinds.ts';
import { uuidv7 } from '../uuidv7.ts';
import { blobPuts, readBlobs, referencedBlobs } from './recording-blobs.ts';

type Line =
  | {
      type: 'header';
      format: string;
      v: number;
      session_id: string;
      exported_at_ms: number;
      realm_id: string;
      backend: string;
      /** The salt this export keyed its hook hashes under (each recording it keyed carries it as `hook_salt`). */
      hook_digest?: { alg: 'hmac-sha256'; salt: string };
    }
  | { type: 'session'; record: SessionRecord }
  | { type: 'row'; index: number; row: Message }
  | { type: 'recording'; key: string; value: TurnRecording }
  | { type: 'blob'; key: string; value: unknown }
  | { type: 'recording_pruned'; value: RecordingPruned }
  | { type: 'ledger'; entry: LedgerEntry };

const LEDGER_PAGE = 1000;

export async function exportSession(
  store: Store,
  sessionId: string,
  realm: { realmId: string; backend: string },
  now: number,
  cipher?: RealmCipher,
): Promise<string> {
  const record = await store.getSession(sessionId);
  if (!record) throw sessionNotFound(sessionId);
  const state = { ...(record.state as PersistedState), machine: null };
  delete state.pending;
  const salt = randomBytes(16).toString('hex');
  const lines: Line[] = [
    {
      type: 'header',
      format: EXPORT_FORMAT,
      v: EXPORT_VERSION,
      session_id: sessionId,
      exported_at_ms: now,
      realm_id: realm.realmId,
      backend: realm.backend,
      hook_digest: { alg: 'hmac-sha256', salt },
    },
    { type: 'session', record: { ...record, state } },
  ];
  const { rows } = await store.readRows(sessionId);
  rows.forEach((row, index) => lines.push({ type: 'row', index, row }));
  const recs = (await readRecords<TurnRecording>(store, TURN_RECORDING_KIND, sessionId)).sort((a, b) => (a.key < b.key ? -1 : 1));
  // The blobs the recordings name; hook summaries keyed under the export's salt (hook-summary.ts): a new
  // blob key for each changed one.
  const rekeyed = new Map<string, string>();
  const stored = await readBlobs(store, sessionId, referencedBlobs(recs.map((r) => r.value)));
  const blobs = [...stored].map(([key, value]) => {
    if (!isHookSummary(value)) return { key, value };
    const keyed = keySummary(value, salt);
    const to = sha256(canonicalJson(keyed));
    if (to !== key) rekeyed.set(key, to);
    return { key: to, value: keyed };
  });
  for (const { key, value } of recs) lines.push({ type: 'recording', key, value: withoutSecrets(opened(value, cipher), salt, rekeyed) });
  blobs.sort((a, b) => (a.key < b.key ? -1 : 1));
  for (const { key, value } of blobs) lines.push({ type: 'blob', key, value });
  const pruned = await readRecord<RecordingPruned>(store, RECORDING_PRUNED_KIND, sessionId);
  if (pruned) lines.push({ type: 'recording_pruned', value: pruned });
  for (let after = 0; ;) {
    const page = await store.readLedger(sessionId, after, LEDGER_PAGE);
    for (const entry of page) lines.push({ type: 'ledger', entry });
    if (page.length < LEDGER_PAGE) break;
    after = page[page.length - 1].seq;
  }
  return lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
}

/** The recording with its sealed `hooks_override` opened (left out if this realm's key does not open it). */
function opened(rec: TurnRecording, cipher: RealmCipher | undefined): TurnRecording {
  const { features } = openFeatures(rec.input.features, cipher);
  if (features === rec.input.features) return rec;
  const input = { ...rec.input };
  if (features) input.features = features;
  else delete input.features;
  return { ...rec, input };
}

/**
 * The recording as exported: a `hooks_override`'s hooks kept by reference (their secrets left out) and its
 * hook hashes keyed under `salt` (the calls' `hooks_hash` pointing at the keyed summaries). A recording
 * already keyed (imported, or a replay of an import) keeps its own salt: its `sha256:` hashes are gone.
 */
function withoutSecrets(rec: TurnRecording, salt: string, rekeyed: ReadonlyMap<string, string>): TurnRecording {
  if (rec.hook_salt) return rec;
  const override = rec.input.features?.hooks_override as HookRunOverrides | undefined;
  const hooked = rec.calls.some((c) => c.request.hooks_hash) || !!override?.entries?.length;
  if (!hooked) return rec;
  const out: TurnRecording = {
    ...rec,
    calls: rec.calls.map((c) => {
      const to = c.request.hooks_hash && rekeyed.get(c.request.hooks_hash);
      return to ? { ...c, request: { ...c.request, hooks_hash: to } } : c;
    }),
    hook_salt: salt,
  };
  if (override?.entries?.length)
    out.input = { ...rec.input, features: { ...rec.input.features, hooks_override: redactOverride(override, salt) } };
  return out;
}

function bad(line: number, what: string): ServiceError {
  return new ServiceError('BAD_REQUEST', `import line ${line}: ${what}`);
}

/** Reads an exported file into `store` (one commit). `newId` gives the session a fresh id; else a clash is 409. */
export async function importSession(
  store: Store,
  text: string,
  opts: { newId: boolean; now: number },
): Promise<{ sessionId: string; messageCount: number; recordings: number; ledgerEntries: number }> {
  const raw = text.split('\n').filter((l) => l.trim() !== '');
  if (raw.length < 2) throw new ServiceError('BAD_REQUEST', 'import: expected a header line and a session line');
  const parsed = raw.map((l, i) => {
    try {
      return JSON.parse(l) as Line;
    } catch {
      throw bad(i + 1, 'not JSON');
    }
  });
  const header = parsed[0];
  if (header.type !== 'header' || header.format !== EXPORT_FORMAT) throw bad(1, `not a ${EXPORT_FORMAT} file`);
  if (header.v !== EXPORT_VERSION) throw bad(1, `unsupported version ${header.v} (this server reads ${EXPORT_VERSION})`);
  let record: SessionRecord | undefined;
  const rows: Message[] = [];
  const recs: Array<{ key: string; value: TurnRecording }> = [];
  const ledger: LedgerEntry[] = [];
  const blobs: Array<{ key: string; value: unknown }> = [];
  let pruned: RecordingPruned | undefined;
  parsed.slice(1).forEach((l, i) => {
    const n = i + 2;
    if (l.type === 'session') {
      if (record || !Value.Check(SessionRecord, l.record)) throw bad(n, 'a second or malformed session record');
      record = l.record;
    } else if (l.type === 'row') {
      if (l.index !== rows.length || !Value.Check(Message, l.row)) throw bad(n, 'malformed or out-of-order row');
      rows.push(l.row);
    } else if (l.type === 'recording') {
      if (typeof l.key !== 'string' || !Value.Check(TurnRecording, l.value)) throw bad(n, 'malformed recording');
      recs.push({ key: l.key, value: l.value });
    } else if (l.type === 'blob') {
      if (typeof l.key !== 'string' || !/^[0-9a-f]{64}$/.test(l.key)) throw bad(n, 'malformed blob');
      blobs.push({ key: l.key, value: l.value });
    } else if (l.type === 'recording_pruned') {
      if (pruned || !Value.Check(RecordingPruned, l.value)) throw bad(n, 'a second or malformed recording_pruned line');
      pruned = l.value;
    } else if (l.type === 'ledger') {
      if (!Value.Check(LedgerEntry, l.entry) || (ledger.length && l.entry.seq <= ledger[ledger.length - 1].seq))
        throw bad(n, 'malformed or out-of-order ledger entry');
      ledger.push(l.entry);
    } else throw bad(n, `unknown line type`);
  });
  if (!record) throw new ServiceError('BAD_REQUEST', 'import: no session record');
  if (record.message_count !== rows.length)
    throw new ServiceError('BAD_REQUEST', `import: the record counts ${record.message_count} rows, the file holds ${rows.length}`);
  const sessionId = opts.newId ? uuidv7() : record.session_id;
  if (!opts.newId && (await store.getSession(sessionId)))
    throw new ServiceError('CONFLICT', `session ${sessionId} already exists in this realm (import with new_id=true)`);
  const session: SessionRecord = {
    ...record,
    session_id: sessionId,
    updated_at_ms: opts.now,
    state: { ...(record.state as PersistedState), machine: null },
  };
  const ops: StoreOp[] = [
    { op: 'putSession', session },
    ...(rows.length ? [{ op: 'putRows', sessionId, fromIndex: 0, rows } as const] : []),
    ...recs.map((r): StoreOp => ({ op: 'putRecord', ns: recordingNs(sessionId), key: r.key, value: r.value })),
    ...blobPuts(blobs.map((b) => [b.key, b.value] as const)),
    ...(pruned ? [{ op: 'putRecord', ns: RECORDING_PRUNED_NS, key: sessionId, value: pruned } as const] : []),
    ...(ledger.length ? [{ op: 'appendLedger', sessionId, entries: ledger } as const] : []),
  ];
  await store.commit(ops);
  return { sessionId, messageCount: rows.length, recordings: recs.length, ledgerEntries: ledger.length };
}
