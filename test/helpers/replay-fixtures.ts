// test/helpers/replay-fixtures.ts: recorded sessions for the replay tests, and the committed fixtures
// under test/fixtures/replay/ made from them (docs/replay.md "Fixtures"). A wire session is recorded by
// the real server talking to a loopback fake of one vendor's streaming wire (test/providers/fake-vendor.ts):
// a tool loop (the shell tool, appending to ran.txt), a structured-output turn (its extraction call) and a
// plain turn. A compaction session is recorded against the scripted model with a small context window.
//
// Regenerate the fixtures (after a change that makes them diverge on purpose):
//   npx tsx test/helpers/replay-fixtures.ts
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { App } from '../../app.ts';
import type { Script, ScriptedProvider } from '../../providers/scripted.ts';
import { startFakeVendor, type FakeVendor, type Responder } from '../providers/fake-vendor.ts';
import { bootApp, call } from './app.ts';
import { compactionScript } from './compaction-script.ts';
import { tmpDir } from './tmp-dir.ts';
import { textResponder, toolCallResponder, type Wire } from './vendor-replies.ts';

export const WIRES = ['anthropic', 'openai', 'gemini', 'self_hosted'] as const;

/** The realm config of every recorded session here (the importing server must offer the same tools). */
export const RECORD_CONFIG = { tools: { shell_enabled: true }, providers: { scripted: { context_window: 2500 } } };

const SCHEMA = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };

/** What the fake vendor answers, in order: tool call, text, structured turn (text, then the JSON), text. */
function wireReplies(wire: Wire): Responder[] {
  return [
    toolCallResponder(wire, { id: 'call_1', name: 'shell', args: { command: 'echo ran >> ran.txt' } }),
    textResponder(wire, 'It ran.'),
    textResponder(wire, 'It is Paris.'),
    textResponder(wire, '{"city": "Paris"}'),
    textResponder(wire, 'Bye.'),
  ];
}

/** Model calls a wire session makes. */
export const WIRE_CALLS = 5;

export interface RecordingServer {
  app: App;
  stateRoot: string;
  /** The loopback vendor (wire sessions only). */
  vendor?: FakeVendor;
  /** The scripted model (scripted sessions only). */
  scripted?: ScriptedProvider;
  close(): Promise<void>;
}

/** A real server whose `wire` provider reaches a loopback vendor (no provider override). */
export async function startWireServer(wire: Wire): Promise<RecordingServer> {
  const vendor = await startFakeVendor(wireReplies(wire));
  const dir = await tmpDir(`warren-replay-${wire}-`);
  const app = await bootApp({
    stateRoot: dir.path,
    realm: 'wires',
    config: RECORD_CONFIG,
    providerOverrides: {},
    env: {
      PATH: process.env.PATH,
      ANTHROPIC_API_KEY: 'k',
      OPENAI_API_KEY: 'k',
      GEMINI_API_KEY: 'k',
      ANTHROPIC_BASE_URL: vendor.url,
      OPENAI_BASE_URL: vendor.url,
      GEMINI_BASE_URL: vendor.url,
    },
  });
  if (wire === 'self_hosted') {
    const r = await call(app.url, 'PATCH', '/config', {
      providers: { self_hosted: { base_url: vendor.url, default_model: 'local-model' } },
    });
    if (r.status !== 200) throw new Error(`PATCH /config: ${r.status} ${JSON.stringify(r.body)}`);
  }
  return {
    app,
    vendor,
    stateRoot: dir.path,
    close: async () => {
      await app.close();
      await vendor.close();
      await dir.cleanup();
    },
  };
}

/** A real server with the scripted model standing in for every provider. */
export async function startScriptedServer(script: Script): Promise<RecordingServer> {
  const dir = await tmpDir('warren-replay-scripted-');
  const app = await bootApp({ stateRoot: dir.path, realm: 'wires', config: RECORD_CONFIG, script });
  return {
    app,
    scripted: app.provider,
    stateRoot: dir.path,
    close: async () => {
      await app.close();
      await dir.cleanup();
    },
  };
}

async function ok(url: string, method: string, path: string, body?: unknown): Promise<any> {
  const r = await call(url, method, path, body);
  if (r.status !== 200) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** The three turns of a wire session; returns its id. */
export async function recordWireSession(url: string, wire: Wire): Promise<string> {
  const created = await ok(url, 'POST', '/sessions', {
    prompt: 'Run the command.',
    provider: wire,
    system_prompt: 'You are a careful assistant.',
    enable_builtins: true,
    enable_shell: true,
  });
  const id = created.session_id as string;
  const structured = await ok(url, 'POST', `/sessions/${id}/messages`, {
    session_id: id,
    prompt: 'Where is the Louvre?',
    output_schema: { schema: SCHEMA, name: 'place' },
  });
  if (JSON.stringify(structured.structured_output) !== '{"city":"Paris"}') throw new Error(`structured: ${JSON.stringify(structured)}`);
  await ok(url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'Thanks.' });
  return id;
}

const FILLER = 'lorem ipsum dolor sit amet '.repeat(40);

/** A scripted session long enough that compaction runs at a turn boundary; returns its id. */
export async function recordCompactionSession(url: string): Promise<string> {
  const body = { model: 'loopback-small', provider: 'scripted', max_tokens: 64, system_prompt: 'SYS', enable_builtins: true };
  const id = (await ok(url, 'POST', '/sessions', { prompt: `turn 0 ${FILLER}`, ...body })).session_id as string;
  for (let i = 1; i <= 5; i++) await ok(url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: `turn ${i} ${FILLER}` });
  return id;
}

/** The committed fixtures: each is recorded by `record` and imported by test/integration/replay-fixtures.test.ts. */
export const FIXTURES: ReadonlyArray<{ file: string; record(): Promise<{ text: string; calls: number }> }> = [
  ...(['anthropic', 'openai', 'gemini'] as const).map((wire) => ({
    file: `${wire}-tools-structured.jsonl`,
    record: () =>
      exportOne(
        () => startWireServer(wire),
        (url) => recordWireSession(url, wire),
      ),
  })),
  {
    file: 'scripted-compaction.jsonl',
    record: () => exportOne(() => startScriptedServer(compactionScript()), recordCompactionSession),
  },
];

async function exportOne(
  start: () => Promise<RecordingServer>,
  record: (url: string) => Promise<string>,
): Promise<{ text: string; calls: number }> {
  const server = await start();
  try {
    const id = await record(server.app.url);
    const res = await fetch(`${server.app.url}/sessions/${id}/export`);
    if (res.status !== 200) throw new Error(`export: ${res.status}`);
    const text = await res.text();
    const calls = text
      .split('\n')
      .filter((l) => l.startsWith('{"type":"recording"'))
      .reduce((n, l) => n + (JSON.parse(l) as { value: { calls: unknown[] } }).value.calls.length, 0);
    return { text, calls };
  } finally {
    await server.close();
  }
}

export const FIXTURE_DIR = fileURLToPath(new URL('../fixtures/replay/', import.meta.url));

export function readFixture(file: string): Promise<string> {
  return readFile(join(FIXTURE_DIR, file), 'utf8');
}

// `npx tsx test/helpers/replay-fixtures.ts`: records every fixture anew and writes it.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const f of FIXTURES) {
    const { text, calls } = await f.record();
    await writeFile(join(FIXTURE_DIR, f.file), text);
    process.stdout.write(`${f.file}: ${text.split('\n').length - 1} lines, ${calls} model calls\n`);
  }
}
