// config/flags.ts: the `warren` command line (SPEC.md "What the service does", server start options).
// main.ts calls parseCli; app.ts takes the resulting StartOptions. Pure: no IO beyond path.resolve.
import { resolve } from 'node:path';
import { CliArgsError, parseLine } from './cli-args.ts';
import { LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from './logger.ts';

/** Backends `--realm-backend` accepts. */
const REALM_BACKEND_CHOICES = ['lmdb', 'jsonl', 'memory', 'sqlite', 'postgres'] as const;
export type RealmBackendChoice = (typeof REALM_BACKEND_CHOICES)[number];

const HTTP_TRANSPORT_CHOICES = ['uws', 'node', 'auto'] as const;
type HttpTransportChoice = (typeof HTTP_TRANSPORT_CHOICES)[number];

/** Everything `warren serve` was asked to do. Omitted optional fields take their documented defaults. */
export interface StartOptions {
  /** Realm to open; omitted means a new isolated `realm-…` realm (or `--default-realm`). */
  realm?: string;
  /** Open a new isolated opaque realm (the default when `realm` is omitted). */
  isolated: boolean;
  instance?: string;
  /** Creation hint only: a realm's manifest pins its backend after the first open. */
  realmBackend?: RealmBackendChoice;
  /** Absolute path; realms live directly under it (`<stateRoot>/<realm>/`). */
  stateRoot?: string;
  contextRoot?: string;
  userConfigRoot?: string;
  exposePaths: boolean;
  /** Listen address; when omitted, config `[rest] host`, else 127.0.0.1. */
  host?: string;
  /** Listen port (0 = any free port); when omitted, config `[rest] port`. */
  port?: number;
  httpTransport: HttpTransportChoice;
  logLevel: LogLevel;
  /** auto (pretty on a terminal, JSON lines otherwise), pretty or json. */
  logFormat: LogFormat;
  /** Serve without inbound API keys even on a non-loopback host (logged at warn on every start). */
  insecureNoAuth?: boolean;
}

/** What the command line asks for. */
export type CliCommand =
  { command: 'help' } | { command: 'version' } | { command: 'serve'; options: StartOptions } | { command: 'auth'; args: string[] };

/** A bad command line; the message is one line, printed as `warren: <message>`. */
export class FlagError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FlagError';
  }
}

export const HELP_TEXT = `Usage: warren <command> [options]

Commands:
  serve                     Run the HTTP server (options below).
  sessions list|show|history  Read sessions of a running server (see 'warren sessions --help').
  chat [session]            Interactive chat with a running server; Ctrl-C interrupts a turn.
  auth                      Provider credentials: list|store|test|status|logout (see 'warren auth --help').
  keys                      Inbound API keys: create|list|revoke (see 'warren keys --help').
  workgraph                 Work graph commands (see 'warren workgraph --help').
  mob                       Call a mob host's JSON-RPC methods (see 'warren mob --help').
  bench                     Load test a running server (see 'warren bench --help').
  replay                    Replay a recorded session against its recording.
  fork                      Fork a session at a turn into a new session.
  rerun                     Re-run a recorded session with another provider or model.
  export                    Export a session as JSON Lines.
  import                    Import a session from JSON Lines.
  doctor                    Check this machine and a realm's setup (see 'warren doctor --help').
  -V, --version             Print the version.
  -h, --help                Show this help.

Runs the Warren HTTP server for LLM agent sessions.

Options of 'warren serve':
  --realm <id>              Realm to open (1-64 chars: letters, digits, '_' or '-', starting with a
                            letter or digit; not UUID-shaped). Default: a new isolated realm-<id>.
  --isolated                Open a new isolated opaque realm (cannot be combined with --realm).
  --default-realm <id>      Realm to open when neither --realm nor --isolated is given ('npm start'
                            passes --default-realm local, so it serves the persistent realm 'local').
  --instance <id>           Instance id of this process within the realm (same format as realm ids).
  --realm-backend <name>    Storage backend for a NEW realm: lmdb (default), sqlite, postgres, jsonl
                            or memory. Once a realm exists, the backend pinned in its
                            realm_manifest.json wins. postgres reads its database URL from
                            WARREN_DATABASE_URL or config [storage] postgres_url.
  --state-root <path>       Directory holding realms: each realm is <path>/<realm>/. Default:
                            <app data>/warren/realms (~/.local/share or $XDG_DATA_HOME on Linux,
                            ~/Library/Application Support on macOS, %APPDATA% on Windows).
  --context-root <path>     Project directory the agent tools work in.
  --user-config-root <path> Directory of user-level configuration.
  --expose-paths            Include resolved_paths (realm file locations) in GET /config.
  --host <addr>             Listen address. Default: config [rest] host, else 127.0.0.1.
  --port <n>                Listen port, 0-65535 (0 picks a free port). Default: config [rest] port.
  --http-transport <kind>   auto (default) or node: node:http, which answers every HTTP/1.x client.
                            uws: uWebSockets.js, about half the CPU per request, but HTTP/1.1 only:
                            no HTTP/1.0, no chunk extensions, malformed requests dropped without a
                            400 (use it behind a proxy that speaks HTTP/1.1). Fails when its native
                            binding does not load (it needs Node 20).
  --log-level <level>       fatal, error, warn, info (default), debug, trace or silent.
  --log-format <format>     auto (default: readable lines on a terminal, JSON lines otherwise),
                            pretty or json.
  --insecure-no-auth        Serve without inbound API keys even on a non-loopback host (logged at
                            warn on every start). Without it such a start needs keys ('warren keys').
  -h, --help                Show this help.

Options take their value as "--opt value" or "--opt=value".
`;

const REALM_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const UUID_SHAPED = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** Why `id` is not a valid realm or instance id, or undefined when it is (wire-notes §1.4). */
export function realmIdProblem(id: string): string | undefined {
  if (!REALM_ID.test(id)) {
    return 'must be 1-64 characters of letters, digits, "_" or "-", starting with a letter or digit';
  }
  if (UUID_SHAPED.test(id)) return 'must not be UUID-shaped';
  return undefined;
}

/** The options of `warren serve`, as parseLine (config/cli-args.ts) reads them. */
const SERVE_OPTIONS = {
  realm: { type: 'string' },
  'default-realm': { type: 'string' },
  instance: { type: 'string' },
  'realm-backend': { type: 'string' },
  'state-root': { type: 'string' },
  'context-root': { type: 'string' },
  'user-config-root': { type: 'string' },
  host: { type: 'string' },
  port: { type: 'string' },
  'http-transport': { type: 'string' },
  'log-level': { type: 'string' },
  'log-format': { type: 'string' },
  isolated: { type: 'boolean' },
  'expose-paths': { type: 'boolean' },
  'insecure-no-auth': { type: 'boolean' },
} as const;

function oneOf<T extends string>(name: string, value: string, choices: readonly T[]): T {
  const found = choices.find((choice) => choice === value);
  if (found === undefined) throw new FlagError(`${name} must be one of ${choices.join(', ')} (got '${value}')`);
  return found;
}

function parsePort(value: string): number {
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535) {
    throw new FlagError(`--port must be an integer from 0 to 65535 (got '${value}')`);
  }
  return Number(value);
}

function checkedId(name: string, value: string): string {
  const problem = realmIdProblem(value);
  if (problem) throw new FlagError(`${name} '${value}' is invalid: ${problem}`);
  return value;
}

/**
 * Parses the options that follow `warren serve` (a leading 'serve' token is also accepted).
 * Throws FlagError on an unknown option, a missing or bad value, a repeated option or a stray argument.
 */
export function parseServeArgs(argv: string[]): StartOptions {
  const args = argv[0] === 'serve' ? argv.slice(1) : argv;
  let values;
  try {
    ({ values } = parseLine(args, SERVE_OPTIONS, { positionals: false }));
  } catch (err) {
    throw err instanceof CliArgsError ? new FlagError(err.message) : err;
  }
  const out: StartOptions = {
    isolated: values.isolated === true,
    exposePaths: values['expose-paths'] === true,
    httpTransport:
      values['http-transport'] === undefined ? 'auto' : oneOf('--http-transport', values['http-transport'], HTTP_TRANSPORT_CHOICES),
    logLevel: values['log-level'] === undefined ? 'info' : oneOf('--log-level', values['log-level'], LOG_LEVELS),
    logFormat: values['log-format'] === undefined ? 'auto' : oneOf('--log-format', values['log-format'], LOG_FORMATS),
  };
  if (values.realm !== undefined) out.realm = checkedId('--realm', values.realm);
  const defaultRealm = values['default-realm'] === undefined ? undefined : checkedId('--default-realm', values['default-realm']);
  if (values.instance !== undefined) out.instance = checkedId('--instance', values.instance);
  if (values['realm-backend'] !== undefined) out.realmBackend = oneOf('--realm-backend', values['realm-backend'], REALM_BACKEND_CHOICES);
  if (values['state-root'] !== undefined) out.stateRoot = resolve(values['state-root']);
  if (values['context-root'] !== undefined) out.contextRoot = resolve(values['context-root']);
  if (values['user-config-root'] !== undefined) out.userConfigRoot = resolve(values['user-config-root']);
  if (values.host !== undefined) out.host = values.host;
  if (values.port !== undefined) out.port = parsePort(values.port);
  if (values['insecure-no-auth']) out.insecureNoAuth = true;
  if (out.isolated && out.realm !== undefined) throw new FlagError('--isolated cannot be combined with --realm');
  if (out.realm === undefined && !out.isolated && defaultRealm !== undefined) out.realm = defaultRealm;
  return out;
}

/**
 * Parses the whole command line (process.argv.slice(2)): `serve [options]`, `--help`, `serve --help`.
 * Help wins over any other problem on the line.
 */
export function parseCli(argv: string[]): CliCommand {
  const [command, ...rest] = argv;
  if (command === '--help' || command === '-h' || command === 'help') return { command: 'help' };
  if (command === '--version' || command === '-V' || command === 'version') return { command: 'version' };
  if (command === undefined) throw new FlagError("missing command: expected 'serve' (see 'warren --help')");
  if (command === 'auth') return { command: 'auth', args: rest };
  if (command !== 'serve') throw new FlagError(`unknown command '${command}' (see 'warren --help')`);
  if (rest.includes('--help') || rest.includes('-h')) return { command: 'help' };
  return { command: 'serve', options: parseServeArgs(rest) };
}
