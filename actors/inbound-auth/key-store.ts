// actors/inbound-auth/key-store.ts: inbound API keys in the realm store. A key is a bearer token
// `wk_<id>_<secret>` shown once at creation; the store keeps only scrypt(secret, per-key salt), so a copy of
// the store does not reveal a usable token. The id is the lookup prefix: verifying a token costs at most one
// scrypt. Last-used times live in their own namespace, so a usage write never races a revoke of the record.
// Key records are read through their record kind; one that does not match is logged as refused and counts
// as no key (fails closed: its token is unknown). Also the realm's cluster secret (`inbound.cluster`).
import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { Compile } from 'typebox/compile';
import { INBOUND_KEYS_NS, InboundKeyRecord, TOKEN_PATTERN, type InboundKeyView, type InboundScope } from '../../contracts/inbound-auth.ts';
import { ServiceError } from '../../contracts/errors.ts';
import {
  CLUSTER_SECRET_KIND,
  INBOUND_KEY_KIND,
  KEY_USAGE_KIND,
  namespaceOf,
  readRecord,
  readValidRecord,
  readValidRecords,
} from '../../storage/record-kinds.ts';
import type { Store } from '../../storage/store.ts';
import type { SealedSecret } from '../../contracts/auth.ts';
import type { RealmCipher } from '../auth/realm-key.ts';

const USAGE_NS = namespaceOf(KEY_USAGE_KIND);
/** Checks a new key before it is stored (reads go through INBOUND_KEY_KIND, the same schema). */
const checkKey = Compile(InboundKeyRecord);
/** scrypt cost (N). r=8, p=1: about 16 MiB and tens of milliseconds per hash. */
const SCRYPT_COST = 16384;
const HASH_BYTES = 32;

function scryptHash(secret: string, salt: Buffer, cost: number): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(secret, salt, HASH_BYTES, { N: cost, r: 8, p: 1, maxmem: 256 * cost * 8 }, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

export interface CreateKeyInput {
  name: string;
  scopes: InboundScope[];
  expiresAtMs?: number;
}

/** Creates a key; the returned token is the only copy there will ever be. */
export async function createKey(
  store: Store,
  input: CreateKeyInput,
  now: number,
  cost = SCRYPT_COST,
): Promise<{ token: string; record: InboundKeyRecord }> {
  const id = randomBytes(6).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  const salt = randomBytes(16);
  const hash = await scryptHash(secret, salt, cost);
  const record: InboundKeyRecord = {
    v: 1,
    id,
    name: input.name,
    scopes: [...new Set(input.scopes)],
    salt: salt.toString('base64'),
    hash: hash.toString('base64'),
    cost,
    created_at_ms: now,
    ...(input.expiresAtMs !== undefined ? { expires_at_ms: input.expiresAtMs } : {}),
  };
  if (!checkKey.Check(record))
    throw new ServiceError('BAD_REQUEST', 'invalid key: name must be 1-128 characters, scopes read|sessions|admin');
  await store.commit([{ op: 'putRecord', ns: INBOUND_KEYS_NS, key: id, value: record }]);
  return { token: `wk_${id}_${secret}`, record };
}

async function allKeys(store: Store): Promise<InboundKeyRecord[]> {
  const out = (await readValidRecords<InboundKeyRecord>(store, INBOUND_KEY_KIND)).map((r) => r.value);
  return out.sort((a, b) => a.created_at_ms - b.created_at_ms || a.id.localeCompare(b.id));
}

/** Every key (revoked ones too), without salt and hash. */
export async function listKeys(store: Store, now: number): Promise<InboundKeyView[]> {
  const usage = new Map<string, number>();
  for (const { key, value } of await readValidRecords<number>(store, KEY_USAGE_KIND)) usage.set(key, value);
  return (await allKeys(store)).map((k) => {
    const lastUsed = usage.get(k.id) ?? k.last_used_at_ms;
    return {
      id: k.id,
      name: k.name,
      scopes: k.scopes,
      created_at_ms: k.created_at_ms,
      ...(k.expires_at_ms !== undefined ? { expires_at_ms: k.expires_at_ms } : {}),
      ...(lastUsed !== undefined ? { last_used_at_ms: lastUsed } : {}),
      ...(k.revoked_at_ms !== undefined ? { revoked_at_ms: k.revoked_at_ms } : {}),
      expired: k.expires_at_ms !== undefined && k.expires_at_ms <= now,
    };
  });
}

/** Keys that can authenticate now (not revoked, not expired). */
export async function usableKeyCount(store: Store, now: number): Promise<number> {
  return (await allKeys(store)).filter((k) => usable(k, now)).length;
}

function usable(k: InboundKeyRecord, now: number): boolean {
  return k.revoked_at_ms === undefined && (k.expires_at_ms === undefined || k.expires_at_ms > now);
}

/** Revokes the key with this id (or, when unambiguous, this name). Returns the revoked record, or undefined. */
export async function revokeKey(store: Store, idOrName: string, now: number): Promise<InboundKeyRecord | undefined> {
  const keys = await allKeys(store);
  let target = keys.find((k) => k.id === idOrName);
  if (!target) {
    const named = keys.filter((k) => k.name === idOrName && k.revoked_at_ms === undefined);
    if (named.length > 1) throw new ServiceError('CONFLICT', `${named.length} keys are named '${idOrName}': revoke by id`);
    target = named[0];
  }
  if (!target) return undefined;
  if (target.revoked_at_ms !== undefined) return target;
  const revoked: InboundKeyRecord = { ...target, revoked_at_ms: now };
  await store.commit([{ op: 'putRecord', ns: INBOUND_KEYS_NS, key: target.id, value: revoked }]);
  return revoked;
}

/** A verified caller. `principal` names the key for mob scopes (`key:<id>`). */
export interface KeyIdentity {
  id: string;
  name: string;
  scopes: InboundScope[];
  principal: string;
}

export type VerifyResult = { ok: true; key: KeyIdentity } | { ok: false; reason: string };

interface CacheEntry {
  record: InboundKeyRecord;
  checkedAt: number;
}

/** How long a verified token is trusted before its record is read again (revocations apply within it). */
const RECHECK_MS = 1_000;
const CACHE_MAX = 10_000;
const USAGE_EVERY_MS = 60_000;

/**
 * Verifies bearer tokens. A token verified once is remembered by its SHA-256 (never the token itself), so
 * the turn path pays a hash and a map lookup; the record is re-read at most every second (revocation,
 * expiry and replacement apply within a second), and scrypt runs again only when the record changed.
 */
export class KeyVerifier {
  private cache = new Map<string, CacheEntry>();
  private usageWritten = new Map<string, number>();

  constructor(
    private readonly store: Store,
    private readonly now: () => number,
    private readonly onError: (err: unknown) => void = () => {},
  ) {}

  async verify(token: string): Promise<VerifyResult> {
    const m = TOKEN_PATTERN.exec(token);
    if (!m) return { ok: false, reason: 'malformed API key' };
    const [, id, secret] = m;
    const fast = createHash('sha256').update(token).digest('base64');
    const now = this.now();
    let entry = this.cache.get(fast);
    if (!entry || now - entry.checkedAt >= RECHECK_MS) {
      const raw = await readValidRecord<InboundKeyRecord>(this.store, INBOUND_KEY_KIND, id);
      if (raw === undefined) {
        this.cache.delete(fast);
        return { ok: false, reason: 'unknown API key' };
      }
      if (!entry || entry.record.hash !== raw.hash || entry.record.salt !== raw.salt) {
        const expected = Buffer.from(raw.hash, 'base64');
        const actual = await scryptHash(secret, Buffer.from(raw.salt, 'base64'), raw.cost);
        if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) {
          this.cache.delete(fast);
          return { ok: false, reason: 'unknown API key' };
        }
      }
      if (this.cache.size >= CACHE_MAX) this.cache.clear();
      entry = { record: raw, checkedAt: now };
      this.cache.set(fast, entry);
    }
    const rec = entry.record;
    if (rec.revoked_at_ms !== undefined) return { ok: false, reason: 'API key revoked' };
    if (rec.expires_at_ms !== undefined && rec.expires_at_ms <= now) return { ok: false, reason: 'API key expired' };
    this.touch(rec.id, now);
    return { ok: true, key: { id: rec.id, name: rec.name, scopes: rec.scopes, principal: `key:${rec.id}` } };
  }

  /** Forgets every remembered token (after a revoke through this process). */
  forget(): void {
    this.cache.clear();
  }

  /** Records last use at most once a minute per key, off the request path. */
  private touch(id: string, now: number): void {
    const last = this.usageWritten.get(id);
    if (last !== undefined && now - last < USAGE_EVERY_MS) return;
    this.usageWritten.set(id, now);
    this.store.commit([{ op: 'putRecord', ns: USAGE_NS, key: id, value: now }]).catch(this.onError);
  }
}

// ---- the realm's cluster secret ---------------------------------------------------------------------

const CLUSTER_NS = namespaceOf(CLUSTER_SECRET_KIND);
const CLUSTER_KEY = 'secret';
/** Binds the sealed secret to its record (the realm key's associated data). */
const CLUSTER_AAD = `${CLUSTER_NS}/${CLUSTER_KEY}`;

interface StoredClusterSecret {
  v?: 1;
  rev?: number;
  /** Written before the secret was sealed: resealed by the first node that reads it. */
  secret?: string;
  sealed?: SealedSecret;
}

/**
 * The realm's cluster secret (32 random bytes), created once in the shared store (the first writer wins)
 * and sealed there with the realm key, so a copy of the store alone does not let anyone pass as a node. A
 * secret stored in the clear by an older Warren is resealed on first read. A secret that does not open
 * with this node's key is a start refusal: every node of a realm needs the same realm key file.
 */
export async function clusterSecret(store: Store, cipher: () => Promise<RealmCipher>, keyPath: string): Promise<Buffer> {
  const read = () => readRecord<StoredClusterSecret>(store, CLUSTER_SECRET_KIND, CLUSTER_KEY);
  let rec = await read();
  if (rec === undefined) {
    const sealed = (await cipher()).seal(CLUSTER_AAD, { secret: randomBytes(32).toString('base64') });
    try {
      await store.commit([
        { op: 'checkRecord', ns: CLUSTER_NS, key: CLUSTER_KEY, rev: null },
        { op: 'putRecord', ns: CLUSTER_NS, key: CLUSTER_KEY, value: { v: 1, rev: 1, sealed } },
      ]);
    } catch {
      // Another node created it first.
    }
    rec = await read();
    if (rec === undefined) throw new Error('the realm cluster secret could not be created');
  }
  if (rec.sealed !== undefined) {
    const secret = (await cipher()).open(CLUSTER_AAD, rec.sealed)?.secret;
    if (secret === undefined) {
      throw new Error(
        `the realm's cluster secret does not open with this node's realm key ${keyPath}: every node of a realm needs the same key file (copy it from a node that serves the realm)`,
      );
    }
    return Buffer.from(secret, 'base64');
  }
  if (rec.secret === undefined) throw new Error('the realm cluster secret record holds no secret');
  // Sealing the same secret twice is harmless (two nodes resealing at once both write it), so no condition.
  const sealed = (await cipher()).seal(CLUSTER_AAD, { secret: rec.secret });
  await store.commit([{ op: 'putRecord', ns: CLUSTER_NS, key: CLUSTER_KEY, value: { v: 1, rev: (rec.rev ?? 1) + 1, sealed } }]);
  return Buffer.from(rec.secret, 'base64');
}
