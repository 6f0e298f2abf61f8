// main.ts: the `warren` command. Parses flags, builds the root logger, starts the app through
// createApp (app.ts) and turns SIGINT/SIGTERM into a clean close. The only file that uses console or
// process.exit.
import { AUTH_HELP, parseAuthArgs, runAuthCommand } from './config/auth-cli.ts';
import { FlagError, HELP_TEXT, parseCli } from './config/flags.ts';
import { createLogger, resolveLogFormat, type Logger } from './config/logger.ts';
import { isContainedStorageRejection } from './storage/store-failure.ts';
import { bannerFields, bannerText } from './cli/start-banner.ts';
import { settleHeapWhenIdle } from './cli/settle-heap.ts';
import { readFileSync } from 'node:fs';
import { packageFile } from './contracts/package-root.ts';

/** The package version, from the package root's package.json (the same from source and from dist/). */
function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(packageFile('package.json'), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

/** One line for stderr, whatever the error holds. */
function oneLine(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.split('\n')[0] ?? message;
}

async function main(argv: string[]): Promise<void> {
  if (argv[0] === 'workgraph') {
    const { runWorkGraphCli } = await import('./cli/workgraph-command.ts');
    const result = await runWorkGraphCli(argv.slice(1));
    process.stdout.write(result.stdout);
    process.stderr.write(result.stderr);
    process.exit(result.code);
  }
  if (argv[0] === 'bench') {
    const { runBenchCli } = await import('./bench/cli.ts');
    const result = await runBenchCli(argv.slice(1));
    process.stdout.write(result.stdout);
    process.stderr.write(result.stderr);
    process.exit(result.code);
  }
  if (argv[0] === 'keys') {
    const { runKeysCli } = await import('./cli/keys-command.ts');
    const result = await runKeysCli(argv.slice(1));
    process.stdout.write(result.stdout);
    process.stderr.write(result.stderr);
    process.exit(result.code);
  }
  if (['replay', 'fork', 'rerun', 'export', 'import'].includes(argv[0])) {
    const { runReplayCli } = await import('./cli/replay-command.ts');
    const result = await runReplayCli(argv);
    process.stdout.write(result.stdout);
    process.stderr.write(result.stderr);
    process.exit(result.code);
  }
  if (argv[0] === 'sessions') {
    const { runSessionsCli } = await import('./cli/sessions-command.ts');
    const result = await runSessionsCli(argv.slice(1));
    process.stdout.write(result.stdout);
    process.stderr.write(result.stderr);
    process.exit(result.code);
  }
  if (argv[0] === 'chat') {
    const { runChat } = await import('./cli/chat-command.ts');
    const code = await runChat(argv.slice(1), {
      input: process.stdin,
      output: process.stdout,
      errors: process.stderr,
      env: process.env,
      onSigint(handler) {
        process.on('SIGINT', handler);
        return () => process.off('SIGINT', handler);
      },
    });
    process.exit(code);
  }
  if (argv[0] === 'doctor') {
    const { runDoctorCli } = await import('./cli/doctor-command.ts');
    const { uwsUnavailableReason } = await import('./http/create-server.ts');
    const result = await runDoctorCli(argv.slice(1), process.env, { uwsProbe: uwsUnavailableReason });
    process.stdout.write(result.stdout);
    process.stderr.write(result.stderr);
    process.exit(result.code);
  }
  if (argv[0] === 'mob') {
    const { runMobCli } = await import('./cli/mob-command.ts');
    const result = await runMobCli(argv.slice(1));
    process.stdout.write(result.stdout);
    process.stderr.write(result.stderr);
    process.exit(result.code);
  }
  let cli;
  try {
    cli = parseCli(argv);
  } catch (err) {
    if (err instanceof FlagError) {
      console.error(`warren: ${err.message}`);
      process.exit(1);
    }
    throw err;
  }
  if (cli.command === 'help') {
    process.stdout.write(HELP_TEXT);
    process.exit(0);
  }
  if (cli.command === 'version') {
    process.stdout.write(`warren ${packageVersion()}\n`);
    process.exit(0);
  }
  if (cli.command === 'auth') return runAuth(cli.args);

  const options = cli.options;
  const format = resolveLogFormat(options.logFormat, process.stdout.isTTY === true);
  const color = format === 'pretty' && process.stdout.isTTY === true && !process.env.NO_COLOR;
  const logger: Logger = createLogger({ level: options.logLevel, format, color });
  process.on('uncaughtException', (err) => {
    logger.fatal({ err }, 'uncaught exception');
    console.error(`warren: fatal: ${oneLine(err)}`);
    process.exit(1);
  });
  process.on('unhandledRejection', (err) => {
    // lmdb-js rejects promises nobody holds when a commit fails; the store already answered that write
    // (storage/store-failure.ts), so a full disk degrades the server instead of ending it.
    if (isContainedStorageRejection(err)) {
      logger.debug({ err }, 'storage library rejection contained');
      return;
    }
    logger.fatal({ err }, 'unhandled rejection');
    console.error(`warren: fatal: ${oneLine(err)}`);
    process.exit(1);
  });

  let app;
  try {
    const { createApp } = await import('./app.ts');
    app = await createApp({ ...options, logger });
  } catch (err) {
    logger.fatal({ err }, 'startup failed');
    console.error(`warren: ${oneLine(err)}`);
    process.exit(1);
  }

  const running = app;
  // An idle server gives back the young generation its start-up grew (cli/settle-heap.ts).
  const settling = settleHeapWhenIdle(logger.child({ component: 'heap' }));
  let closing = false;
  const shutdown = (signal: NodeJS.Signals): void => {
    if (closing) {
      logger.warn({ signal }, 'second signal during shutdown; exiting now');
      process.exit(1);
    }
    closing = true;
    settling.stop();
    logger.info({ signal }, 'shutting down');
    running.close().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        console.error(`warren: shutdown failed: ${oneLine(err)}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
  // The handlers above come first: a signal right after 'listening' must find them installed.
  const banner = {
    version: packageVersion(),
    url: app.url,
    realmId: app.realmId,
    realmDir: app.realmDir,
    backend: app.backend,
    isolated: options.realm === undefined,
    inboundAuth: app.inboundAuth,
  };
  // Readable logs get the banner as text on stderr; JSON lines get it as one structured line (both at info).
  if (format === 'pretty') {
    if (logger.isLevelEnabled('info')) process.stderr.write(bannerText(banner));
  } else logger.info(bannerFields(banner), 'ready');
}

/** `warren auth ...`: a client of a running server's /auth routes; the secret comes from stdin. */
async function runAuth(args: string[]): Promise<void> {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(AUTH_HELP);
    process.exit(0);
  }
  let cmd;
  try {
    cmd = parseAuthArgs(args, process.env);
  } catch (err) {
    console.error(`warren: ${oneLine(err)}`);
    process.exit(1);
  }
  const readStdin = async (): Promise<string> => {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  };
  const result = await runAuthCommand(cmd, readStdin);
  process.stdout.write(result.stdout);
  process.stderr.write(result.stderr);
  process.exit(result.code);
}

main(process.argv.slice(2)).catch((err: unknown) => {
  console.error(`warren: ${oneLine(err)}`);
  process.exit(1);
});
