// cli/keys-command.ts: `warren keys create|list|revoke`, the inbound API keys of a realm. It opens the
// realm's store directly (LMDB, SQLite and postgres stores are safe to share with a running server, which
// re-reads a key record at most a second after it changed), so it works with the server up or down.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import pino from 'pino';
import { INBOUND_SCOPES, type InboundScope } from '../contracts/inbound-auth.ts';
import { isServiceError } from '../contracts/errors.ts';
import { CliArgsError, parseLine, wantsHelp } from '../config/cli-args.ts';
import { MANIFEST_FILE, openRealm, realmsRoot } from '../config/realm.ts';
import { createKey, listKeys, revokeKey } from '../actors/inbound-auth/key-store.ts';
import { openStore } from '../storage/open-store.ts';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

const KEYS_HELP = `Usage: warren keys create --realm <id> --name <name> --scopes <list> [--expires-in <dur>] [--json]
       warren keys list --realm <id> [--json]
       warren keys revoke --realm <id> <key id or name>

Manages the inbound API keys of a realm (Authorization: Bearer wk_...). Works on the realm's store
directly, whether or not a server is running on it.

Options:
  --realm <id>          The realm (required).
  --state-root <path>   Directory holding realms (default: as for 'warren serve').
  --name <name>         A label for the key (1-128 characters).
  --scopes <list>       Comma-separated: read, sessions, admin (admin includes sessions, sessions includes read).
  --expires-in <dur>    Lifetime, e.g. 90d, 12h, 30m (default: never expires).
  --json                Machine-readable output.

'create' prints the token once; only a slow hash of it is stored, so it cannot be shown again.
postgres realms read their database URL from WARREN_DATABASE_URL.
`;

class UsageError extends Error {}

interface Parsed {
  command: 'create' | 'list' | 'revoke' | 'help';
  opts: Record<string, string>;
  positional: string[];
  json: boolean;
}

const KEYS_OPTIONS = {
  realm: { type: 'string' },
  'state-root': { type: 'string' },
  name: { type: 'string' },
  scopes: { type: 'string' },
  'expires-in': { type: 'string' },
  json: { type: 'boolean' },
} as const;

function parse(argv: string[]): Parsed {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || wantsHelp(rest))
    return { command: 'help', opts: {}, positional: [], json: false };
  if (command !== 'create' && command !== 'list' && command !== 'revoke')
    throw new UsageError(`unknown keys command '${command}' (create, list or revoke)`);
  let parsed;
  try {
    parsed = parseLine(rest, KEYS_OPTIONS);
  } catch (err) {
    throw err instanceof CliArgsError ? new UsageError(err.message) : err;
  }
  const { json, ...values } = parsed.values;
  const opts = Object.fromEntries(Object.entries(values).filter((e): e is [string, string] => typeof e[1] === 'string'));
  return { command, opts, positional: parsed.positionals, json: json === true };
}

function parseScopes(raw: string | undefined): InboundScope[] {
  if (!raw) throw new UsageError('--scopes is required (read, sessions, admin)');
  const scopes = raw.split(',').map((s) => s.trim());
  for (const s of scopes)
    if (!(INBOUND_SCOPES as readonly string[]).includes(s)) throw new UsageError(`unknown scope '${s}' (read, sessions, admin)`);
  return scopes as InboundScope[];
}

function parseDuration(raw: string): number {
  const m = /^(\d{1,6})([smhd])$/.exec(raw);
  if (!m) throw new UsageError(`--expires-in must look like 90d, 12h, 30m or 45s (got '${raw}')`);
  const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 's' | 'm' | 'h' | 'd'];
  return Number(m[1]) * unit;
}

const iso = (ms: number | undefined): string => (ms === undefined ? '-' : new Date(ms).toISOString());

/** Runs `warren keys <argv...>`. Never throws. */
export async function runKeysCli(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<CliResult> {
  try {
    const p = parse(argv);
    if (p.command === 'help') return { code: 0, stdout: KEYS_HELP, stderr: '' };
    const realm = p.opts.realm;
    if (!realm) throw new UsageError('give --realm <id>');
    const stateRoot = p.opts['state-root'] === undefined ? undefined : resolve(p.opts['state-root']);
    const root = realmsRoot(stateRoot === undefined ? {} : { stateRoot });
    if (!existsSync(join(root, realm, MANIFEST_FILE)))
      return { code: 1, stdout: '', stderr: `warren: realm not found: ${realm} (under ${root})\n` };
    // Validate before opening anything.
    const scopes = p.command === 'create' ? parseScopes(p.opts.scopes) : [];
    if (p.command === 'create' && !p.opts.name) throw new UsageError('--name is required');
    const ttl = p.opts['expires-in'] === undefined ? undefined : parseDuration(p.opts['expires-in']);
    if (p.command === 'revoke' && p.positional.length !== 1) throw new UsageError('revoke takes one key id or name');
    const info = await openRealm({
      realm,
      ...(stateRoot === undefined ? {} : { stateRoot }),
      isolated: false,
      logger: pino({ level: 'silent' }),
    });
    const url = env.WARREN_DATABASE_URL;
    const store = await openStore(info.backend, info.storeDir, url ? { postgres: { url } } : {});
    try {
      const now = Date.now();
      if (p.command === 'create') {
        const { token, record } = await createKey(
          store,
          { name: p.opts.name, scopes, expiresAtMs: ttl === undefined ? undefined : now + ttl },
          now,
        );
        if (p.json) {
          const out = { id: record.id, name: record.name, scopes: record.scopes, expires_at_ms: record.expires_at_ms, token };
          return { code: 0, stdout: `${JSON.stringify(out)}\n`, stderr: '' };
        }
        return {
          code: 0,
          stdout: `${token}\n`,
          stderr: `created key ${record.id} '${record.name}' (${record.scopes.join(',')}), expires ${iso(record.expires_at_ms)}. The token above is shown only now.\n`,
        };
      }
      if (p.command === 'list') {
        const keys = await listKeys(store, now);
        if (p.json) return { code: 0, stdout: `${JSON.stringify({ keys })}\n`, stderr: '' };
        const lines = keys.map((k) => {
          const state = k.revoked_at_ms !== undefined ? 'revoked' : k.expired ? 'expired' : 'active';
          return `${k.id}  ${k.name}  ${k.scopes.join(',')}  ${state}  created ${iso(k.created_at_ms)}  expires ${iso(k.expires_at_ms)}  last used ${iso(k.last_used_at_ms)}`;
        });
        return { code: 0, stdout: lines.length ? `${lines.join('\n')}\n` : '', stderr: lines.length ? '' : 'no keys\n' };
      }
      const revoked = await revokeKey(store, p.positional[0], now);
      if (!revoked) return { code: 1, stdout: '', stderr: `warren: no key '${p.positional[0]}'\n` };
      return {
        code: 0,
        stdout: p.json ? `${JSON.stringify({ id: revoked.id, revoked: true })}\n` : `revoked ${revoked.id} '${revoked.name}'\n`,
        stderr: '',
      };
    } finally {
      await store.close();
    }
  } catch (err) {
    if (err instanceof UsageError) return { code: 2, stdout: '', stderr: `warren: ${err.message}\n` };
    if (isServiceError(err)) return { code: 1, stdout: '', stderr: `warren: ${err.message}\n` };
    return { code: 1, stdout: '', stderr: `warren: ${err instanceof Error ? err.message : String(err)}\n` };
  }
}
