// config/logger.ts: builds the one root pino logger (JSON lines, base {service:'warren'}, credentials
// redacted), or the same lines made readable (config/log-pretty.ts). main.ts creates it and app.ts passes
// it down; tests pass a destination to capture lines.
import { pino, type DestinationStream, type Logger } from 'pino';
import { prettyDestination } from './log-pretty.ts';
import { MCP_CONFIG_HOLDERS, SECRET_FIELD_NAMES, SECRET_MAP_FIELDS } from '../contracts/secret-paths.ts';

export type { Logger };

/** Log levels accepted by `--log-level`. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Formats `--log-format` accepts: auto (pretty on a terminal, else JSON lines), pretty, json. */
export const LOG_FORMATS = ['auto', 'pretty', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** The format a start writes: `auto` is pretty when stdout is a terminal, JSON lines otherwise. */
export function resolveLogFormat(format: LogFormat, stdoutIsTty: boolean): 'pretty' | 'json' {
  if (format === 'auto') return stdoutIsTty ? 'pretty' : 'json';
  return format;
}

/** Credential fields, wherever a log object carries them at the top level or one level down. */
const SECRET_FIELDS = SECRET_FIELD_NAMES;

/** Header names that carry credentials (lowercase, as Node and uWS deliver them). */
const SECRET_HEADERS = ['authorization', 'proxy-authorization', 'cookie', 'x-api-key', 'x-goog-api-key', 'x-webhook-secret', 'api-key'];

const HEADER_HOLDERS = ['headers', 'req.headers', 'request.headers', 'res.headers', '*.headers'];

/** fast-redact paths covered by the root logger. @internal exported for tests. */
const REDACT_PATHS: readonly string[] = [
  ...SECRET_FIELDS,
  ...SECRET_FIELDS.map((field) => `*.${field}`),
  // Request bodies and credential material nest one level deeper (e.g. {body: {secret}}, {credential: {material: {access_token}}}).
  ...SECRET_FIELDS.map((field) => `*.*.${field}`),
  ...HEADER_HOLDERS.flatMap((holder) => SECRET_HEADERS.map((header) => `${holder}["${header}"]`)),
  // An MCP server config's headers and env (every value is secret), at the top level or one down.
  ...MCP_CONFIG_HOLDERS.flatMap((holder) => SECRET_MAP_FIELDS.flatMap((f) => [`${holder}.${f}`, `*.${holder}.${f}`])),
];

export interface LoggerOptions {
  level: LogLevel;
  /** Where the lines go; stdout (synchronous) when omitted. */
  destination?: DestinationStream;
  /** JSON lines (default) or readable lines; the same fields either way. */
  format?: 'pretty' | 'json';
  /** ANSI colours in the pretty format (default off). */
  color?: boolean;
}

/** Creates the root logger: pino JSON with `service: 'warren'` and credentials censored as '[redacted]'. */
export function createLogger({ level, destination, format = 'json', color = false }: LoggerOptions): Logger {
  const options = {
    level,
    base: { service: 'warren' },
    redact: { paths: [...REDACT_PATHS], censor: '[redacted]' },
  };
  if (format === 'pretty') {
    const out = destination ?? pino.destination({ dest: 1, sync: true });
    return pino(options, prettyDestination({ out, color }));
  }
  return destination ? pino(options, destination) : pino(options);
}
