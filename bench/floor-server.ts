// bench/floor-server.ts: the floor a Warren turn is compared with. A bare node:http server (no framework)
// answering the two turn routes the bench drives (POST /sessions, POST /sessions/{id}/messages): it keeps
// each session's Anthropic-shaped history in memory, calls the fake LLM with the same streaming Messages
// request Warren sends, parses the SSE stream, and group-commits one fsync'd JSON line per turn before it
// answers. Run as a child process by bench/server-process.ts (startFloor); prints its URL over IPC.
import { createServer } from 'node:http';
import { openSync, readFileSync, writeSync, fdatasyncSync } from 'node:fs';
import { join } from 'node:path';
import type { ServerResponse } from 'node:http';
import { EldWindow } from './eld.ts';
import { parseProgramLine } from '../config/cli-args.ts';
import { Agent, request } from 'undici';

const { values: args } = parseProgramLine(
  'bench/floor-server.ts',
  { llm: { type: 'string', default: '' }, dir: { type: 'string', default: '' }, shape: { type: 'string', default: '' } },
  { positionals: false },
);
const llm = `${args.llm}/v1/messages`;
const fd = openSync(join(args.dir, 'floor.jsonl'), 'a');
// The request fields besides the messages (system prompt, tool specs) exactly as Warren sends them.
const shape = JSON.parse(readFileSync(args.shape, 'utf8')) as Record<string, unknown>;
const agent = new Agent({ keepAliveTimeout: 30_000 });
type Msg = { role: 'user' | 'assistant'; content: Array<{ type: 'text'; text: string }> };
const sessions = new Map<string, Msg[]>();
let seq = 0;
// Live subscribers per session (GET /sessions/{id}/events, the inflight scenario): each text delta is
// written to them as one SSE frame as soon as it is parsed, and `run_completed` after the durable line.
const subscribers = new Map<string, Set<ServerResponse>>();
function publish(id: string, event: string, data: string): void {
  const subs = subscribers.get(id);
  if (!subs) return;
  const frame = `event: ${event}\ndata: ${data}\n\n`;
  for (const res of subs) res.write(frame);
}

// Group commit: every line queued while one fsync runs goes out in the next write + fdatasync.
let queue: Array<{ line: string; done: () => void }> = [];
let flushing = false;
function flush(): void {
  if (flushing || queue.length === 0) return;
  flushing = true;
  setImmediate(() => {
    const batch = queue;
    queue = [];
    writeSync(fd, batch.map((b) => b.line).join(''));
    fdatasyncSync(fd);
    flushing = false;
    for (const b of batch) b.done();
    flush();
  });
}
const commit = (line: string) =>
  new Promise<void>((done) => {
    queue.push({ line, done });
    flush();
  });

async function turn(id: string, prompt: string): Promise<string> {
  const history = sessions.get(id)!;
  history.push({ role: 'user', content: [{ type: 'text', text: prompt }] });
  const res = await request(llm, {
    dispatcher: agent,
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      'x-api-key': 'bench-key',
      'anthropic-version': '2023-06-01',
    },
    body: JSON.stringify({ ...shape, messages: history }),
  });
  let text = '';
  let rest = '';
  for await (const chunk of res.body) {
    const frames = (rest + chunk.toString()).split('\n\n');
    rest = frames.pop() ?? '';
    for (const f of frames) {
      const data = f.slice(f.indexOf('data: ') + 6);
      const ev = JSON.parse(data) as { type: string; delta?: { text?: string } };
      if (ev.type === 'content_block_delta' && ev.delta?.text) {
        text += ev.delta.text;
        publish(id, 'text_delta', JSON.stringify({ delta: ev.delta.text }));
      }
    }
  }
  history.push({ role: 'assistant', content: [{ type: 'text', text }] });
  await commit(`${JSON.stringify({ id, prompt, text })}\n`);
  publish(id, 'run_completed', '{}');
  return text;
}

const server = createServer((req, res) => {
  const events = req.method === 'GET' ? /^\/sessions\/([^/]+)\/events$/.exec(req.url ?? '') : null;
  if (events) {
    const id = events[1]!;
    if (!sessions.has(id)) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write(': ok\n\nevent: session_loaded\ndata: {}\n\n');
    let subs = subscribers.get(id);
    if (!subs) subscribers.set(id, (subs = new Set()));
    subs.add(res);
    res.on('close', () => subs.delete(res));
    return;
  }
  let body = '';
  req.on('data', (c: Buffer) => (body += c));
  req.on('end', () => {
    const m = /^\/sessions(?:\/([^/]+)\/messages)?$/.exec(req.url ?? '');
    const input = m && req.method === 'POST' ? (JSON.parse(body) as { prompt: string; history_turns?: number }) : null;
    if (!m || !input) return void res.writeHead(404).end();
    const id = m[1] ?? `s${++seq}`;
    if (!m[1]) {
      // history_turns: a session that starts with that many prior turns (continue at a given history).
      sessions.set(
        id,
        Array.from({ length: 2 * (input.history_turns ?? 0) }, (_, i) => ({
          role: i % 2 ? 'assistant' : 'user',
          content: [{ type: 'text', text: i % 2 ? ' tok'.repeat(20) : 'and then?' }],
        })),
      );
    } else if (!sessions.has(id)) return void res.writeHead(404).end();
    // Prefer: respond-async (the inflight scenario): 202 at once, the turn's end goes to the subscribers.
    if (/respond-async/.test(String(req.headers.prefer ?? ''))) {
      res.writeHead(202, { 'content-type': 'application/json' }).end(JSON.stringify({ session_id: id }));
      turn(id, input.prompt).catch((err: unknown) => publish(id, 'run_failed', JSON.stringify({ error: String(err) })));
      return;
    }
    turn(id, input.prompt).then(
      (text) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ session_id: id, text })),
      (err: unknown) => res.writeHead(502).end(String(err)),
    );
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  process.send?.({ type: 'listening', url: `http://127.0.0.1:${port}` });
});
process.on('disconnect', () => process.exit(0));
const eld = new EldWindow();
process.on('message', (m: { type: string }) => {
  if (m.type === 'eld-start') {
    eld.start();
    process.send?.({ type: 'eld-start' });
    return;
  }
  if (m.type === 'eld-stop') return void process.send?.({ type: 'eld-stop', eld: eld.stop() });
  if (m.type !== 'stop') return;
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
