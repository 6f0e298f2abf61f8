// cli/server-client.ts: the small HTTP client the `warren sessions` and `warren chat` commands share.
// The server URL comes from --url, else $WARREN_URL, else http://127.0.0.1:8080; $WARREN_API_KEY, when
// set, is sent as a bearer token (inbound API keys). Errors carry the server's error envelope message.

const DEFAULT_URL = 'http://127.0.0.1:8080';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface ServerTarget {
  url: string;
  apiKey?: string;
}

/** The server to talk to: an explicit --url wins over $WARREN_URL. */
export function serverTarget(url: string | undefined, env: NodeJS.ProcessEnv): ServerTarget {
  const base = (url ?? env.WARREN_URL ?? DEFAULT_URL).replace(/\/+$/, '');
  const apiKey = env.WARREN_API_KEY?.trim();
  return apiKey ? { url: base, apiKey } : { url: base };
}

/** A request that failed: `status` 0 when the server did not answer. */
export class ServerError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code?: string,
  ) {
    super(message);
    this.name = 'ServerError';
  }
}

export function headersFor(target: ServerTarget, extra: Record<string, string> = {}): Record<string, string> {
  const headers: Record<string, string> = { accept: 'application/json', ...extra };
  if (target.apiKey) headers.authorization = `Bearer ${target.apiKey}`;
  return headers;
}

/** One JSON request; resolves with the parsed body of a 2xx answer, throws ServerError otherwise. */
export async function requestJson(
  target: ServerTarget,
  method: string,
  path: string,
  body?: unknown,
  extraHeaders: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  let res: Response;
  try {
    res = await fetch(`${target.url}${path}`, {
      method,
      headers: headersFor(target, body === undefined ? extraHeaders : { 'content-type': 'application/json', ...extraHeaders }),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
    throw new ServerError(`cannot reach ${target.url}${cause}`, 0);
  }
  const text = await res.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    throw new ServerError(`${method} ${path}: ${res.status} with a non-JSON body`, res.status);
  }
  if (!res.ok) {
    const code = typeof parsed.code === 'string' ? parsed.code : undefined;
    const message = typeof parsed.message === 'string' ? parsed.message : typeof parsed.error === 'string' ? parsed.error : text;
    throw new ServerError(`${method} ${path}: ${res.status}${code ? ` ${code}` : ''}: ${message}`, res.status, code);
  }
  return { status: res.status, body: parsed };
}

/** Lays rows out as a left-aligned text table with a header line. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n') + '\n';
}
