// config/log-pretty.ts: the human-readable form of the log (`--log-format pretty`, the default on a
// terminal). A pino destination: pino still builds each JSON line (redaction, serializers, child
// bindings), and this stream turns the line into
//   12:34:56.789 INFO  sessions  turn committed session_id=… tokens=12
// with an error's stack indented below its line. config/logger.ts wires it in; main.ts picks the format.
import type { DestinationStream } from 'pino';

const LEVEL_NAMES: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
/** ANSI colour of each level's label (only when colour is on). */
const LEVEL_COLORS: Record<number, string> = { 10: '90', 20: '36', 30: '32', 40: '33', 50: '31', 60: '35' };
/** Fields the line's fixed columns show, or that every line carries (the base binding). */
const SHOWN = new Set(['level', 'time', 'msg', 'component', 'service']);

export interface PrettyOptions {
  /** Where the formatted lines go (a synchronous stream: pino.destination(1) in main.ts). */
  out: { write(text: string): unknown };
  /** ANSI colours (a terminal that has not set NO_COLOR). */
  color: boolean;
}

const paint = (on: boolean, code: string, text: string): string => (on ? `\u001b[${code}m${text}\u001b[0m` : text);

function clock(time: unknown): string {
  const d = typeof time === 'number' ? new Date(time) : new Date();
  const two = (n: number): string => String(n).padStart(2, '0');
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}.${String(d.getMilliseconds()).padStart(3, '0')}`;
}

/** A value as it follows `key=`: bare when unambiguous, else JSON (strings quoted, objects inline). */
function valueText(value: unknown): string {
  if (typeof value === 'string') return value !== '' && !/[\s"=\\]/.test(value) ? value : JSON.stringify(value);
  if (value === undefined) return 'undefined';
  // JSON.stringify answers undefined for a function or a symbol (pino never logs one; shown by its type).
  return JSON.stringify(value) ?? `[${typeof value}]`;
}

interface SerializedError {
  stack: string;
  [key: string]: unknown;
}

/** A field pino's err serializer produced (it carries a string stack). */
function isSerializedError(value: unknown): value is SerializedError {
  return typeof value === 'object' && value !== null && typeof (value as { stack?: unknown }).stack === 'string';
}

/** One pino JSON line as readable text (ending in a newline); a line that is not JSON passes through. */
export function prettyLine(json: string, color: boolean): string {
  let rec: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(json);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return json.endsWith('\n') ? json : `${json}\n`;
    rec = parsed as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const level = typeof rec.level === 'number' ? rec.level : 30;
  const label = (LEVEL_NAMES[level] ?? `L${level}`).padEnd(5);
  const parts = [paint(color, '90', clock(rec.time)), paint(color, LEVEL_COLORS[level] ?? '0', label)];
  if (typeof rec.component === 'string') parts.push(paint(color, '36', `[${rec.component}]`));
  if (rec.msg !== undefined) parts.push(typeof rec.msg === 'string' ? rec.msg : valueText(rec.msg));
  const stacks: string[] = [];
  for (const [key, value] of Object.entries(rec)) {
    if (SHOWN.has(key)) continue;
    if (isSerializedError(value)) {
      // The stack's first line already names the type and message; the error's other fields (code, …) stay inline.
      for (const [k, v] of Object.entries(value)) {
        if (k !== 'stack' && k !== 'message' && k !== 'type') parts.push(`${paint(color, '90', `${key}.${k}=`)}${valueText(v)}`);
      }
      stacks.push(value.stack);
      continue;
    }
    parts.push(`${paint(color, '90', `${key}=`)}${valueText(value)}`);
  }
  let out = parts.join(' ');
  for (const stack of stacks) out += `\n${stack.replace(/^/gm, '    ')}`;
  return `${out}\n`;
}

/** A pino destination writing each line in its pretty form to `out`. */
export function prettyDestination({ out, color }: PrettyOptions): DestinationStream {
  return {
    write(line: string): void {
      // pino hands over one complete line per call (the root logger is synchronous, never batched).
      out.write(prettyLine(line.endsWith('\n') ? line.slice(0, -1) : line, color));
    },
  };
}
