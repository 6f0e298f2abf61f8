// config/cli-args.ts: the one command-line parser of the `warren` commands (config/flags.ts, auth, cli/*) and the
// bench programs: node:util parseArgs, with the checks and one-line messages every command shares. Pure.
//
// parseArgs runs non-strict with tokens so each problem gets the repo's wording rather than Node's:
//   unknown option '--x'   --x needs a value   --x needs a non-empty value   --x takes no value
//   --x given more than once   unexpected argument 'y'
// A value is "--opt value" or "--opt=value"; a missing value, or (not written inline) another of the command's
// options in its place, is an error, and so is an empty one. Any other word is taken as the value, dashes and all
// (`--node-flags --max-old-space-size=8192`, `--port -1` then fails the port's own check). Options not declared `multiple` may be given once.
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** The options a command declares (node:util parseArgs' own shape: type, short, multiple, default). */
export type CliOptions = NonNullable<ParseArgsConfig['options']>;

type Strict<O extends CliOptions> = { options: O; allowPositionals: true; strict: true };

/** What parseLine returns: parseArgs' typed values and the positionals in order. */
export interface ParsedLine<O extends CliOptions> {
  values: ReturnType<typeof parseArgs<Strict<O>>>['values'];
  positionals: string[];
}

/** A bad command line; the message is one line, without the program's name. */
export class CliArgsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliArgsError';
  }
}

/** Parses `args` against `options`. Throws CliArgsError; with `positionals: false`, any positional is an error. */
export function parseLine<const O extends CliOptions>(
  args: readonly string[],
  options: O,
  { positionals: allowPositionals = true }: { positionals?: boolean } = {},
): ParsedLine<O> {
  const { values, positionals, tokens } = parseArgs({ args: [...args], options, allowPositionals: true, strict: false, tokens: true });
  const seen = new Set<string>();
  for (const token of tokens) {
    if (token.kind === 'positional') {
      if (!allowPositionals) throw new CliArgsError(`unexpected argument '${token.value}'`);
      continue;
    }
    if (token.kind !== 'option') continue;
    const spec = Object.hasOwn(options, token.name) ? options[token.name] : undefined;
    if (!spec || (!token.rawName.startsWith('--') && spec.short !== token.rawName.slice(1))) {
      throw new CliArgsError(`unknown option '${token.rawName}'`);
    }
    if (spec.type === 'boolean') {
      if (token.inlineValue) throw new CliArgsError(`${token.rawName} takes no value`);
    } else if (token.value === undefined || (!token.inlineValue && isOption(token.value, options))) {
      throw new CliArgsError(`${token.rawName} needs a value`);
    } else if (token.value === '') {
      throw new CliArgsError(`${token.rawName} needs a non-empty value`);
    }
    if (!spec.multiple && seen.has(token.name)) throw new CliArgsError(`${token.rawName} given more than once`);
    seen.add(token.name);
  }
  return { values: values as ParsedLine<O>['values'], positionals };
}

/** True when `arg` names one of `options` (`--name`, `--name=…` or `-x` of a short one). */
function isOption(arg: string, options: CliOptions): boolean {
  if (arg.startsWith('--')) {
    const name = arg.slice(2).split('=')[0];
    return Object.hasOwn(options, name);
  }
  return arg.length === 2 && arg.startsWith('-') && Object.values(options).some((o) => o.short === arg[1]);
}

/** True when the line asks for help (`-h` or `--help` anywhere before a `--`): help wins over other problems. */
export function wantsHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((a) => a === '--help' || a === '-h');
}

/** parseLine over this process's own arguments; a bad line prints `<program>: <reason>` and exits 2. */
export function parseProgramLine<const O extends CliOptions>(
  program: string,
  options: O,
  opts: { positionals?: boolean } = {},
): ParsedLine<O> {
  try {
    return parseLine(process.argv.slice(2), options, opts);
  } catch (err) {
    if (!(err instanceof CliArgsError)) throw err;
    process.stderr.write(`${program}: ${err.message}\n`);
    process.exit(2);
  }
}

/**
 * Checks numeric options already read (`{ rounds: 5, c: 10 }`): one that is not a positive integer prints
 * `<program>: --<name> must be a positive integer` and exits 1.
 */
export function requirePositiveIntegers(program: string, values: Readonly<Record<string, number>>): void {
  for (const [name, v] of Object.entries(values)) {
    if (Number.isInteger(v) && v >= 1) continue;
    process.stderr.write(`${program}: --${name} must be a positive integer
`);
    process.exit(1);
  }
}
