// cli/chat-command.ts: `warren chat [session]`, an interactive REPL against a running server. Each line
// is a turn sent with `Prefer: respond-async` (POST /sessions for the first turn of a new session, POST
// /sessions/{id}/messages after); the reply streams from GET /sessions/{id}/events?request_id=… as its
// text_delta events arrive (a text_complete whose deltas were not seen is printed whole). Ctrl-C during a turn interrupts it (POST /sessions/{id}/interrupt); Ctrl-C
// at an idle prompt, or end of input (Ctrl-D), exits.
import { createInterface } from 'node:readline';
import { parseLine } from '../config/cli-args.ts';
import { createParser } from 'eventsource-parser';
import { headersFor, requestJson, serverTarget, ServerError, type ServerTarget } from './server-client.ts';

const CHAT_HELP = `Usage: warren chat [session] [--provider P] [--model M] [--url URL]
Chats with a running server: a new session, or the given one continued. Each reply streams as it is
generated. Ctrl-C during a reply interrupts the turn; Ctrl-C at the prompt or Ctrl-D exits.
--url defaults to $WARREN_URL or http://127.0.0.1:8080; $WARREN_API_KEY is sent as a bearer token.
`;

export interface ChatIo {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  errors: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  /** Registers the process-level interrupt (SIGINT); returns the unregister function. */
  onSigint(handler: () => void): () => void;
}

interface TurnEnd {
  ok: boolean;
  detail?: string;
}

/** Streams one turn's events; resolves at run_completed or run_failed (or when the stream ends). */
async function streamTurn(
  target: ServerTarget,
  sessionId: string,
  requestId: string,
  write: (text: string) => void,
  abort: AbortSignal,
): Promise<TurnEnd> {
  const res = await fetch(`${target.url}/sessions/${sessionId}/events?request_id=${encodeURIComponent(requestId)}`, {
    headers: headersFor(target, { accept: 'text/event-stream' }),
    signal: abort,
  });
  if (!res.ok || !res.body) throw new ServerError(`GET /sessions/${sessionId}/events: ${res.status}`, res.status);
  let end: TurnEnd | undefined;
  // A fast turn can end (and the ledger drop its deltas) before the stream opens: a text_complete with no
  // deltas before it is printed whole.
  let streamed = false;
  const parser = createParser({
    onEvent(event) {
      if (end) return;
      let env: { payload?: Record<string, unknown> };
      try {
        env = JSON.parse(event.data) as { payload?: Record<string, unknown> };
      } catch {
        return;
      }
      const payload = env.payload ?? {};
      if (payload.type === 'text_delta' && typeof payload.delta === 'string') {
        write(payload.delta);
        streamed = true;
      } else if (payload.type === 'text_complete') {
        if (!streamed && typeof payload.content === 'string') write(payload.content);
        streamed = false;
      } else if (payload.type === 'run_completed') end = { ok: true };
      else if (payload.type === 'run_failed') {
        const cause = payload.terminal_cause_kind ?? payload.error ?? payload.reason;
        end = { ok: false, detail: typeof cause === 'string' ? cause : JSON.stringify(cause ?? 'failed') };
      }
    },
  });
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  try {
    while (!end) {
      const { value, done } = await reader.read();
      if (done) break;
      parser.feed(value);
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return end ?? { ok: false, detail: 'event stream ended before the turn did' };
}

/** Runs the REPL until input ends or an idle Ctrl-C; resolves with the exit code. */
export async function runChat(argv: string[], io: ChatIo): Promise<number> {
  let parsed;
  try {
    parsed = parseLine(argv, {
      url: { type: 'string' },
      provider: { type: 'string' },
      model: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    });
  } catch (err) {
    io.errors.write(`warren chat: ${err instanceof Error ? err.message : String(err)}\n${CHAT_HELP}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.output.write(CHAT_HELP);
    return 0;
  }
  if (positionals.length > 1) {
    io.errors.write(`warren chat: unexpected argument '${positionals[1]}'\n${CHAT_HELP}`);
    return 2;
  }
  const target = serverTarget(values.url, io.env);
  let sessionId = positionals[0];
  if (sessionId !== undefined) {
    try {
      await requestJson(target, 'GET', `/sessions/${encodeURIComponent(sessionId)}`);
    } catch (err) {
      io.errors.write(`warren chat: ${err instanceof Error ? err.message : String(err)}\n`);
      return 1;
    }
  }

  const rl = createInterface({ input: io.input, output: io.output, terminal: (io.input as { isTTY?: boolean }).isTTY === true });
  rl.setPrompt('you> ');
  /** The turn in flight; sessionId is undefined until a new session's create is accepted. */
  let turn: { sessionId: string | undefined; abort: AbortController; interrupting: boolean } | undefined;
  let exiting = false;
  const onInterrupt = (): void => {
    if (!turn) {
      exiting = true;
      rl.close();
      return;
    }
    if (turn.interrupting) return;
    turn.interrupting = true;
    io.errors.write('\n[interrupting]\n');
    if (turn.sessionId !== undefined) sendInterrupt(turn.sessionId, turn.abort);
  };
  const sendInterrupt = (id: string, abort: AbortController): void => {
    requestJson(target, 'POST', `/sessions/${id}/interrupt`).catch((err: unknown) => {
      io.errors.write(`warren chat: interrupt failed: ${err instanceof Error ? err.message : String(err)}\n`);
      abort.abort();
    });
  };
  rl.on('SIGINT', onInterrupt);
  const unregister = io.onSigint(onInterrupt);
  let code = 0;
  try {
    rl.prompt();
    for await (const raw of rl) {
      const line = raw.trim();
      if (exiting) break;
      if (line === '') {
        rl.prompt();
        continue;
      }
      const body: Record<string, unknown> = { prompt: line };
      if (sessionId !== undefined) body.session_id = sessionId;
      if (values.provider !== undefined) body.provider = values.provider;
      if (values.model !== undefined) body.model = values.model;
      const path = sessionId === undefined ? '/sessions' : `/sessions/${sessionId}/messages`;
      // The turn counts as running from the moment it is sent: a Ctrl-C before the server accepts it
      // interrupts it as soon as its session is known.
      turn = { sessionId, abort: new AbortController(), interrupting: false };
      try {
        const { body: accepted } = await requestJson(target, 'POST', path, body, { prefer: 'respond-async' });
        const sid = String(accepted.session_id);
        const rid = String(accepted.request_id);
        if (sessionId === undefined) io.errors.write(`[session ${sid}]\n`);
        sessionId = sid;
        if (turn.sessionId === undefined && turn.interrupting) sendInterrupt(sid, turn.abort);
        turn.sessionId = sid;
        const end = await streamTurn(target, sid, rid, (text) => io.output.write(text), turn.abort.signal);
        io.output.write('\n');
        if (!end.ok) io.errors.write(turn.interrupting ? '[interrupted]\n' : `[turn failed: ${end.detail}]\n`);
      } catch (err) {
        if (turn?.abort.signal.aborted) io.errors.write('[stopped]\n');
        else {
          io.errors.write(`warren chat: ${err instanceof Error ? err.message : String(err)}\n`);
          code = 1;
        }
      } finally {
        turn = undefined;
      }
      if (exiting) break;
      rl.prompt();
    }
  } finally {
    unregister();
    rl.close();
  }
  if (sessionId !== undefined) io.errors.write(`[session ${sessionId}]\n`);
  return code;
}
