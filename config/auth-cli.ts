// config/auth-cli.ts: `warren auth list|store|test|status|logout`, a small client of a running Warren's
// /auth routes. The secret of `store` is read from stdin, never from the command line (argv is visible to
// every user of the machine). main.ts parses with parseAuthArgs and prints what runAuthCommand returns.
import { CliArgsError, parseLine } from './cli-args.ts';
import { FlagError } from './flags.ts';

const AUTH_SUBCOMMANDS = ['list', 'store', 'test', 'status', 'logout'] as const;
type AuthSubcommand = (typeof AUTH_SUBCOMMANDS)[number];
const METHODS = ['api_key', 'azure_api_key', 'static_bearer'] as const;

export interface AuthCommand {
  sub: AuthSubcommand;
  url: string;
  realm: string;
  binding?: string;
  profile?: string;
  provider?: string;
  method: (typeof METHODS)[number];
}

export const AUTH_HELP = `Usage: warren auth list   --realm <id> [--url <base>]
       warren auth store  --realm <id> --binding <id> --provider <name> [--method <m>] [--profile <id>] < secret
       warren auth test   --realm <id> --binding <id> [--profile <id>]
       warren auth status --realm <id> --binding <id> [--profile <id>]
       warren auth logout --realm <id> --binding <id> [--profile <id>]

Manages outbound provider credentials of a running Warren server through its /auth routes.
  --url <base>       Server address (default: $WARREN_URL, else http://127.0.0.1:8080).
  --method <m>       api_key (default), azure_api_key or static_bearer.
The secret is read from standard input (one trailing newline is dropped); it is never taken from argv.
`;

const OPTIONS = {
  url: { type: 'string' },
  realm: { type: 'string' },
  binding: { type: 'string' },
  profile: { type: 'string' },
  provider: { type: 'string' },
  method: { type: 'string' },
} as const;

/** Parses the words after `warren auth`. */
export function parseAuthArgs(argv: string[], env: NodeJS.ProcessEnv = {}): AuthCommand {
  const [sub, ...rest] = argv;
  if (!sub || !(AUTH_SUBCOMMANDS as readonly string[]).includes(sub)) {
    throw new FlagError(`warren auth needs one of ${AUTH_SUBCOMMANDS.join(', ')} (see 'warren auth --help')`);
  }
  if (rest.some((arg) => arg === '--secret' || arg.startsWith('--secret='))) {
    throw new FlagError('secrets are read from stdin, never from the command line');
  }
  let values;
  try {
    ({ values } = parseLine(rest, OPTIONS, { positionals: false }));
  } catch (err) {
    if (!(err instanceof CliArgsError)) throw err;
    throw new FlagError(err.message.startsWith('unknown option') ? `${err.message} for warren auth ${sub}` : err.message);
  }
  if (!values.realm) throw new FlagError(`warren auth ${sub} needs --realm`);
  if (sub !== 'list' && !values.binding) throw new FlagError(`warren auth ${sub} needs --binding`);
  if (sub === 'store' && !values.provider) throw new FlagError('warren auth store needs --provider');
  const method = values.method ?? 'api_key';
  if (!(METHODS as readonly string[]).includes(method)) throw new FlagError(`--method must be one of ${METHODS.join(', ')}`);
  const cmd: AuthCommand = {
    sub: sub as AuthSubcommand,
    url: (values.url ?? env.WARREN_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, ''),
    realm: values.realm,
    method: method as AuthCommand['method'],
  };
  if (values.binding) cmd.binding = values.binding;
  if (values.profile) cmd.profile = values.profile;
  if (values.provider) cmd.provider = values.provider;
  return cmd;
}

export interface AuthCliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs one command against the server. Exit code 0 on a 2xx answer, 1 otherwise. */
export async function runAuthCommand(cmd: AuthCommand, readStdin: () => Promise<string>): Promise<AuthCliResult> {
  const query = new URLSearchParams({ realm_id: cmd.realm, ...(cmd.profile ? { profile_id: cmd.profile } : {}) }).toString();
  const b = encodeURIComponent(cmd.binding ?? '');
  let method = 'GET';
  let path: string;
  let body: unknown;
  switch (cmd.sub) {
    case 'list':
      path = `/auth/profiles?${query}`;
      break;
    case 'status':
      path = `/auth/bindings/${b}/status?${query}`;
      break;
    case 'logout':
      method = 'POST';
      path = `/auth/bindings/${b}/logout?${query}`;
      break;
    case 'test':
      method = 'POST';
      path = `/auth/bindings/${b}/test`;
      body = { realm_id: cmd.realm, ...(cmd.profile ? { profile_id: cmd.profile } : {}) };
      break;
    case 'store': {
      const secret = (await readStdin()).replace(/\r?\n$/, '');
      if (secret === '') return { code: 1, stdout: '', stderr: 'warren: no secret on standard input\n' };
      method = 'POST';
      path = '/auth/profiles';
      body = {
        realm_id: cmd.realm,
        binding_id: cmd.binding,
        profile_id: cmd.profile ?? null,
        provider: cmd.provider,
        auth_method: cmd.method,
        secret,
      };
      break;
    }
  }
  let res: Response;
  try {
    res = await fetch(cmd.url + path, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    return { code: 1, stdout: '', stderr: `warren: cannot reach ${cmd.url}: ${(err as Error).message}\n` };
  }
  const text = await res.text();
  let pretty = text;
  try {
    pretty = JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    // not JSON: print as is
  }
  if (res.ok) return { code: 0, stdout: `${pretty}\n`, stderr: '' };
  return { code: 1, stdout: `${pretty}\n`, stderr: `warren: auth ${cmd.sub} failed with HTTP ${res.status}\n` };
}
