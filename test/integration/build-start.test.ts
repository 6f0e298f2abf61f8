// The production build (scripts/build.mjs, what `npm run build` and `prepare` make): the bundled
// JavaScript serves without tsx's loader doing any TypeScript, finds the files it reads at runtime from
// the package root (the viewer's ui/, README.md for help, embedded skills/), and the sqlite backend's
// writer thread starts from its compiled entry. The build goes to a folder of this test's own (never the
// real dist/) and is removed afterwards.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { call } from '../helpers/app.ts';
import { startServerProcess } from '../helpers/server-process.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';
import { frame, sseReply, startFakeVendor } from '../providers/fake-vendor.ts';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const MODEL = 'claude-sonnet-4-6';
const ev = (data: { type: string } & Record<string, unknown>): string => frame(data, data.type);
const REPLY = [
  ev({
    type: 'message_start',
    message: {
      id: 'm1',
      type: 'message',
      role: 'assistant',
      model: MODEL,
      content: [],
      stop_reason: null,
      usage: { input_tokens: 1, output_tokens: 0 },
    },
  }),
  ev({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
  ev({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'built reply' } }),
  ev({ type: 'content_block_stop', index: 0 }),
  ev({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 2 } }),
  ev({ type: 'message_stop' }),
];

function build(outdir: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['scripts/build.mjs', '--outdir', outdir], { cwd: REPO, timeout: 60_000 }, (err, _stdout, stderr) =>
      err ? reject(new Error(`build failed: ${stderr}`)) : resolve(stderr),
    );
  });
}

describe('production build', () => {
  it('serves a turn from the bundled JavaScript, with ui/, help and the sqlite writer found', async (t) => {
    const outdir = `.build-test-${process.pid}`;
    t.after(() => rm(join(REPO, outdir), { recursive: true, force: true }));
    await build(outdir);
    const files = await readdir(join(REPO, outdir));
    assert.ok(files.includes('main.js') && files.includes('sqlite-writer.js'), `entries built: ${files.join(' ')}`);

    const dir = await tmpDir('warren-build-');
    t.after(() => dir.cleanup());
    const vendor = await startFakeVendor([sseReply(REPLY)]);
    t.after(() => vendor.close());
    const env = { ...process.env, ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: vendor.url };
    // No --import tsx: the bundle runs on plain node.
    const server = await startServerProcess({
      stateRoot: dir.path,
      realm: 'built',
      backend: 'sqlite',
      entry: join(REPO, outdir, 'main.js'),
      nodeArgs: [],
      env,
      t,
    });

    const created = await call(server.url, 'POST', '/sessions', { prompt: 'hi', model: MODEL });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const id = created.body.session_id as string;
    const again = await call(server.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'again' });
    assert.equal(again.status, 200, JSON.stringify(again.body));

    const help = await call(server.url, 'POST', '/help', { question: 'how do I start?', model: MODEL });
    assert.equal(help.status, 200, JSON.stringify(help.body));
    assert.match(JSON.stringify(vendor.requests.at(-1)?.body.system), /self-hostable HTTP server/, 'help read README.md');

    const ui = await fetch(`${server.url}/ui`);
    assert.equal(ui.status, 200, 'the viewer page is served from ui/');
    assert.match(await ui.text(), /<html/i);
    assert.equal(server.hasExited(), false);
    assert.doesNotMatch(server.stderr(), /Error/);
  });
});
