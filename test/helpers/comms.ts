// test/helpers/comms.ts: helpers of the comms and ingress tests: keep-alive session creation, waiting for
// a session's n-th committed run (over its SSE stream, replayed from the ledger, so no run is missed),
// and reading the injected-context rows of its history.
import { call, createSession } from './app.ts';
import { openEvents } from './sse-client.ts';

/** Creates a comms agent (keep_alive with a comms name) and returns its id. */
export function createAgent(base: string, name: string, extra: Record<string, unknown> = {}): Promise<string> {
  return createSession(base, { prompt: `you are ${name}`, keep_alive: true, comms_name: name, ...extra });
}

/** Resolves once the session has committed `n` runs in all (create's first turn counts). */
export async function waitRuns(base: string, sessionId: string, n: number, timeoutMs = 20_000): Promise<void> {
  const sse = await openEvents(base, sessionId, {}, '?after_seq=0');
  try {
    await sse.until(
      (c) => c.frames.filter((f) => f.event === 'run_completed').length >= n,
      `${n} run_completed on ${sessionId}`,
      timeoutMs,
    );
  } finally {
    sse.close();
  }
}

export interface Row {
  role: string;
  content?: unknown;
  transcript_role?: string;
}

/** The committed transcript. */
export async function historyOf(base: string, sessionId: string): Promise<Row[]> {
  const res = await call(base, 'GET', `/sessions/${sessionId}/history`);
  if (res.status !== 200) throw new Error(`history ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.messages as Row[];
}

/** Text of every user row (injected or not), in order. */
export async function userTexts(base: string, sessionId: string): Promise<string[]> {
  return (await historyOf(base, sessionId))
    .filter((r) => r.role === 'user')
    .map((r) => (typeof r.content === 'string' ? r.content : JSON.stringify(r.content)));
}

/** POST /sessions/{id}/external-events with a generic_json envelope. */
export function postEvent(base: string, sessionId: string, eventType: string, payload: unknown, headers: Record<string, string> = {}) {
  return call(base, 'POST', `/sessions/${sessionId}/external-events`, { kind: 'generic_json', event_type: eventType, payload }, headers);
}

/** POST /comms/send. */
export function send(base: string, body: Record<string, unknown>) {
  return call(base, 'POST', '/comms/send', body);
}
