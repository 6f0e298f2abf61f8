// config/realm.ts: realm paths and first-open creation (SPEC.md "What the service does"; wire-notes §1.4).
// A realm is a directory `<realms root>/<realm>/` holding config.toml, realm_manifest.json (pins the
// backend) and config_state.json (CAS generation). app.ts calls openRealm once at startup.
import { randomBytes } from 'node:crypto';
import { homedir as osHomedir } from 'node:os';
import { chmod, mkdir, readFile } from 'node:fs/promises';
import { explainFsFailure } from './fs-problem.ts';
import path from 'node:path';
import { Type, type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import type { Logger } from 'pino';
import { ServiceError } from '../contracts/errors.ts';
import { SUPPORTED_BACKENDS } from '../storage/store.ts';
import { realmIdProblem, type RealmBackendChoice } from './flags.ts';
import { createFileExclusive } from './fs-atomic.ts';
import { configToToml, defaultConfig } from './toml.ts';

export const MANIFEST_FILE = 'realm_manifest.json';
export const CONFIG_FILE = 'config.toml';
const CONFIG_STATE_FILE = 'config_state.json';
export const STORE_DIR = 'store';
const DEFAULT_BACKEND: RealmBackendChoice = 'lmdb';

/** realm_manifest.json. Extra members written by other tools are tolerated and kept on disk. */
const RealmManifest = Type.Object(
  {
    realm_id: Type.String(),
    backend: Type.Union([
      Type.Literal('lmdb'),
      Type.Literal('jsonl'),
      Type.Literal('memory'),
      Type.Literal('sqlite'),
      Type.Literal('postgres'),
    ]),
    origin: Type.String(),
    created_at: Type.String(),
  },
  { $id: 'RealmManifest', additionalProperties: true },
);
type RealmManifest = Static<typeof RealmManifest>;
const checkManifest = Compile(RealmManifest);

/** An opened realm: its id, pinned backend and file locations. */
export interface RealmInfo {
  realmId: string;
  dir: string;
  /** Backend pinned by the manifest (authoritative over any hint). */
  backend: RealmBackendChoice;
  manifestPath: string;
  configPath: string;
  configStatePath: string;
  /** Directory the storage backend owns (`<dir>/store`). */
  storeDir: string;
  /** True when this call created the realm (wrote its manifest). */
  created: boolean;
}

export interface OpenRealmOptions {
  realm?: string;
  stateRoot?: string;
  backendHint?: RealmBackendChoice;
  isolated: boolean;
  instance?: string;
  logger: Logger;
  /** Overrides for locating the app data dir when no stateRoot is given (tests). */
  platform?: NodeJS.Platform;
  env?: NodeJS.ProcessEnv;
  homedir?: string;
}

/**
 * `<per-OS data dir>/warren`: `$XDG_DATA_HOME` (if absolute) or `~/.local/share` on Linux and other
 * Unixes, `~/Library/Application Support` on macOS, `%APPDATA%` (else `~/AppData/Roaming`) on Windows.
 */
export function appDataBase(platform: NodeJS.Platform, env: NodeJS.ProcessEnv, homedir: string): string {
  if (platform === 'win32') {
    const appData = env.APPDATA;
    return path.win32.join(appData && appData.length > 0 ? appData : path.win32.join(homedir, 'AppData', 'Roaming'), 'warren');
  }
  if (platform === 'darwin') return path.posix.join(homedir, 'Library', 'Application Support', 'warren');
  const xdg = env.XDG_DATA_HOME;
  const base = xdg && path.posix.isAbsolute(xdg) ? xdg : path.posix.join(homedir, '.local', 'share');
  return path.posix.join(base, 'warren');
}

/**
 * The directory that holds realm directories: `--state-root` itself when given (a realm is then
 * `<stateRoot>/<realm>/`), else `<app data>/warren/realms`.
 */
export function realmsRoot(opts: { stateRoot?: string; platform?: NodeJS.Platform; env?: NodeJS.ProcessEnv; homedir?: string }): string {
  if (opts.stateRoot !== undefined) return path.resolve(opts.stateRoot);
  const platform = opts.platform ?? process.platform;
  const base = appDataBase(platform, opts.env ?? process.env, opts.homedir ?? osHomedir());
  return platform === 'win32' ? path.win32.join(base, 'realms') : path.posix.join(base, 'realms');
}

/**
 * A new opaque realm id: `realm-` + a time-ordered, random 24-hex-char id (48-bit ms timestamp, 48
 * random bits). It never looks like a UUID, so `<realm>:<uuid>` locators stay unambiguous.
 */
export function newRealmId(now: number = Date.now()): string {
  const time = Math.max(0, Math.floor(now)).toString(16).padStart(12, '0').slice(-12);
  return `realm-${time}${randomBytes(6).toString('hex')}`;
}

function manifestProblem(file: string, detail: string): ServiceError {
  return new ServiceError('INTERNAL_ERROR', `Realm manifest ${file} is invalid: ${detail}`);
}

/** Reads and checks a realm_manifest.json (ServiceError when invalid; a missing file rejects with ENOENT). */
export async function readManifest(file: string): Promise<RealmManifest> {
  const text = await readFile(file, 'utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw manifestProblem(file, err instanceof Error ? err.message : String(err));
  }
  if (!checkManifest.Check(parsed)) {
    const [first] = checkManifest.Errors(parsed);
    throw manifestProblem(file, first ? `${first.instancePath || '/'}: ${first.message}` : 'schema mismatch');
  }
  return parsed as RealmManifest;
}

/** Refuses to pin a new realm to a backend Warren cannot open (no realm is written). */
function assertBuiltBackend(backend: RealmBackendChoice): void {
  if (!SUPPORTED_BACKENDS.some((b) => b === backend)) {
    throw new ServiceError(
      'CAPABILITY_UNAVAILABLE',
      `Realm backend '${backend}' is not supported yet; supported backends: ${SUPPORTED_BACKENDS.join(', ')}`,
    );
  }
}

/**
 * Opens a realm, creating it on first use. The three realm files are each created only when absent
 * and appear atomically, so two processes opening the same new realm both succeed and agree: the first
 * manifest written wins and the other process reads it. After creation the manifest's backend is
 * authoritative; a different `backendHint` is logged at warn and ignored.
 */
export async function openRealm(opts: OpenRealmOptions): Promise<RealmInfo> {
  const { logger } = opts;
  if (opts.isolated && opts.realm !== undefined) {
    throw new ServiceError('BAD_REQUEST', 'An isolated realm cannot also name a realm id');
  }
  const explicit = opts.realm !== undefined;
  const realmId = opts.realm ?? newRealmId();
  const problem = realmIdProblem(realmId);
  if (problem) throw new ServiceError('BAD_REQUEST', `Invalid realm id '${realmId}': ${problem}`);

  const dir = path.join(realmsRoot(opts), realmId);
  const manifestPath = path.join(dir, MANIFEST_FILE);
  const configPath = path.join(dir, CONFIG_FILE);
  const configStatePath = path.join(dir, CONFIG_STATE_FILE);
  const storeDir = path.join(dir, STORE_DIR);

  let existing: RealmManifest | undefined;
  try {
    existing = await readManifest(manifestPath);
  } catch (err) {
    if (err instanceof ServiceError) throw err;
    if (!(typeof err === 'object' && err !== null && 'code' in err && err.code === 'ENOENT'))
      throw await explainFsFailure(err, 'open the realm directory', dir);
  }
  if (!existing) assertBuiltBackend(opts.backendHint ?? DEFAULT_BACKEND);

  let created = false;
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    // An existing realm directory is narrowed too (mkdir's mode applies only to what it creates).
    await chmod(dir, 0o700);
    // The manifest goes last: its presence marks a complete realm. Each create is a no-op when present.
    await createFileExclusive(configPath, configToToml(defaultConfig()));
    await createFileExclusive(configStatePath, `${JSON.stringify({ generation: 0 })}\n`);
    if (!existing) {
      const manifest: RealmManifest = {
        realm_id: realmId,
        backend: opts.backendHint ?? DEFAULT_BACKEND,
        origin: explicit ? 'explicit' : 'generated',
        created_at: new Date().toISOString(),
      };
      created = await createFileExclusive(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
      existing = created ? manifest : await readManifest(manifestPath);
    }
    await mkdir(storeDir, { recursive: true, mode: 0o700 });
    await chmod(storeDir, 0o700);
    // Files written before modes were narrowed (0644) are narrowed on open.
    for (const f of [configPath, configStatePath, manifestPath]) await chmod(f, 0o600);
  } catch (err) {
    if (err instanceof ServiceError) throw err;
    throw await explainFsFailure(err, 'open the realm directory', dir);
  }
  if (opts.backendHint !== undefined && opts.backendHint !== existing.backend) {
    logger.warn(
      { realmId, requested: opts.backendHint, pinned: existing.backend },
      'realm backend pinned by manifest; ignoring requested backend',
    );
  }
  if (existing.realm_id !== realmId) {
    logger.warn({ realmId, manifestRealmId: existing.realm_id }, 'realm manifest names a different realm id');
  }
  if (created) logger.info({ realmId, backend: existing.backend, dir }, 'realm created');
  logger.debug({ realmId, instanceId: opts.instance, backend: existing.backend }, 'realm opened');
  return { realmId, dir, backend: existing.backend, manifestPath, configPath, configStatePath, storeDir, created };
}
