// cli/workgraph-args.ts: the `warren workgraph` command line: subcommands, options, help text. Pure.
// cli/workgraph-command.ts runs what this parses.
import { CliArgsError, parseLine, wantsHelp, type CliOptions } from '../config/cli-args.ts';

const WORKGRAPH_COMMANDS = [
  'list',
  'show',
  'ready',
  'snapshot',
  'events',
  'goal-create',
  'goal-status',
  'goal-confirm',
  'goal-close',
  'attention-list',
  'attention-pause',
  'attention-resume',
] as const;
export type WorkGraphCommand = (typeof WORKGRAPH_COMMANDS)[number];

/** Commands that mutate: they need trusted in-process authority, i.e. the realm opened directly. */
export const MUTATING: ReadonlySet<WorkGraphCommand> = new Set([
  'goal-create',
  'goal-confirm',
  'goal-close',
  'attention-pause',
  'attention-resume',
]);

export const WORKGRAPH_HELP = `Usage: warren workgraph <command> [arguments] [options]

Reads and host-authority commands of a realm's WorkGraph. Output is JSON on stdout.
Exit codes: 0 success, 1 error (bad usage, not found, refused by the item's machine or policy).

Commands:
  list                        Work items (non-terminal unless --include-terminal or --status)
  show <item_id>              One work item
  ready                       Ready items (open, unclaimed, no unresolved blocker, gates passed)
  snapshot                    Items, edges, ready ids, attention, event high-water mark
  events                      Event log after --after-seq (default 0)
  goal-create --title <t>     Create a goal: a work item plus an attention binding (host authority)
  goal-status <binding_id>    The goal's item and attention binding
  goal-confirm <binding_id>   Record a host confirmation (or --principal <id> confirmation)
  goal-close <binding_id>     Close the goal's item (--status completed|cancelled|failed, default
                              completed; the completion policy still applies) and stop its attention
  attention-list              Attention bindings (--status, --target-session)
  attention-pause <binding_id>  Pause attention (--until <RFC 3339>)
  attention-resume <binding_id> Resume paused attention

Where:
  --realm <id>                Realm to open directly (it must exist)
  --state-root <path>         Directory holding realms (as for 'warren serve')
  --url <base>                Read from a running server instead (read commands only); goal and
                              attention mutations need the realm opened directly (host authority)
  --namespace <ns>            Namespace (default 'default')

Filters and fields:
  --all-namespaces  --include-terminal  --status <s> (repeatable)  --label <l> (repeatable)
  --limit <n>  --after-seq <n>
  goal-create: --title <t> --description <d> --priority low|medium|high
               --policy self_attest|host_confirmed|principal_confirmed|supervisor|reviewer_quorum
               --principal <id> (principal_confirmed)  --supervisor <kind:id>  --threshold <n>
               --target-session <session_id> | --target-owner <kind:id>
               --mode pursue|coordinate|review|falsify|judge|observe
               --authority add_evidence|close_own_review_item|request_closure|close_if_policy_allows
  goal-confirm: --principal <id> --summary <text>
  -h, --help                  Show this help
`;

export class UsageError extends Error {}

export interface ParsedWorkGraph {
  command: WorkGraphCommand | 'help';
  positional: string[];
  /** Single-valued options by name (without dashes). */
  opts: Record<string, string>;
  /** Repeatable options. */
  multi: Record<string, string[]>;
  flags: Set<string>;
}

const VALUE = [
  'realm',
  'state-root',
  'url',
  'namespace',
  'limit',
  'after-seq',
  'title',
  'description',
  'priority',
  'policy',
  'principal',
  'supervisor',
  'threshold',
  'target-session',
  'target-owner',
  'mode',
  'authority',
  'summary',
  'until',
] as const;
const REPEAT = ['status', 'label'] as const;
const FLAGS = ['all-namespaces', 'include-terminal'] as const;
const OPTIONS: CliOptions = Object.fromEntries([
  ...VALUE.map((name) => [name, { type: 'string' }] as const),
  ...REPEAT.map((name) => [name, { type: 'string', multiple: true }] as const),
  ...FLAGS.map((name) => [name, { type: 'boolean' }] as const),
]);

/** Parses the arguments after `workgraph`. Throws UsageError with a one-line reason. */
export function parseWorkGraphArgs(argv: string[]): ParsedWorkGraph {
  const out: ParsedWorkGraph = { command: 'help', positional: [], opts: {}, multi: {}, flags: new Set() };
  if (argv.length === 0 || wantsHelp(argv) || argv[0] === 'help') return out;
  const [cmd, ...rest] = argv;
  if (!(WORKGRAPH_COMMANDS as readonly string[]).includes(cmd!))
    throw new UsageError(`unknown workgraph command '${cmd}' (see 'warren workgraph --help')`);
  out.command = cmd as WorkGraphCommand;
  let parsed;
  try {
    parsed = parseLine(rest, OPTIONS);
  } catch (err) {
    throw err instanceof CliArgsError ? new UsageError(err.message) : err;
  }
  out.positional = parsed.positionals;
  for (const [name, value] of Object.entries(parsed.values)) {
    if (value === true) out.flags.add(name);
    else if (Array.isArray(value)) out.multi[name] = value.filter((v): v is string => typeof v === 'string');
    else if (typeof value === 'string') out.opts[name] = value;
  }
  return out;
}

/** `kind:id` owner keys (e.g. `session:abc`, `principal:ops`). */
export function parseOwnerKey(text: string): { kind: string; id: string } {
  const i = text.indexOf(':');
  if (i <= 0 || i === text.length - 1) throw new UsageError(`expected <kind:id>, got '${text}'`);
  return { kind: text.slice(0, i), id: text.slice(i + 1) };
}
