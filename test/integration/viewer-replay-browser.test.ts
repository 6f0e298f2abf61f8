// The viewer's forks and replays (docs/viewer.md "Turns, forks and replays") in a real headless Chromium
// against a running Warren: a session's turns each offer "Fork here" and "Replay"; a fork opens with a link
// to where it came from; a replay opens with its progress while it runs (held at a hook), then its report;
// after a hook change a replay shows the first divergence (turn, call, field path, recorded vs now). With
// API keys on, a read key's fork is refused in the page and a sessions key's replay goes through.
// Saves docs/viewer-replay.png when it is missing. The browser closes before the servers.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WarrenClient } from '../../client/src/client.ts';
import { call, startApp } from '../helpers/app.ts';
import { chromiumSkipReason, openPage } from '../helpers/chromium.ts';
import { deferred } from '../helpers/gates.ts';
import { startHookServer } from '../helpers/hook-fixtures.ts';
import { createKey } from '../helpers/keys-cli.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';
import { SLOW_TEST_MS } from '../helpers/wait.ts';

const SCREENSHOT = fileURLToPath(new URL('../../docs/viewer-replay.png', import.meta.url));

describe('viewer forks and replays in Chromium', { skip: chromiumSkipReason }, () => {
  it('forks at a turn, replays with progress and an identical report, then shows a divergence', { timeout: SLOW_TEST_MS }, async (t) => {
    const app = await startApp(t, []);
    const server = await startHookServer();
    t.after(() => server.close());
    const hooks = (url: string) => ({ entries: [{ id: 'watch', point: 'pre_llm_request', runtime: { type: 'http', url } }] });
    assert.equal((await call(app.url, 'PATCH', '/config', { hooks: hooks(server.url) })).status, 200);
    // Turn 1 switches the hook off for its run: a changed hook diverges at turn 2.
    const created = await call(app.url, 'POST', '/sessions', {
      prompt: 'one',
      system_prompt: 'sys',
      hooks_override: { disable: ['watch'] },
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const id = created.body.session_id as string;
    for (const prompt of ['two', 'three']) {
      const r = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    }

    const { browser, page, pageErrors } = await openPage(t);
    await page.goto(`${app.url}/ui?kind=session&id=${id}`);
    await page.waitForSelector('#turns li[data-turn="3"]');
    const prompts = await page.$$eval('#turns li .prompt', (els) => els.map((e) => e.textContent));
    assert.deepEqual(prompts, ['one', 'two', 'three']);
    const title = () => page.textContent('#chart-title');

    // Fork here (turn 2): the fork opens, two turns long, with a link to its source.
    await page.click('#turns li[data-turn="2"] button.fork');
    await page.waitForFunction((src) => document.querySelector('#forked-from')?.textContent === src, id);
    const forkId = ((await title()) ?? '').replace(/^session /, '');
    assert.notEqual(forkId, id);
    await page.waitForFunction(() => document.querySelectorAll('#turns li[data-turn]').length === 2);
    const fork = await call(app.url, 'GET', `/sessions/${forkId}`);
    assert.equal(fork.body.labels['warren.forked_from'], id);
    assert.equal((await call(app.url, 'GET', `/sessions/${forkId}/turns`)).body.turns.length, 2);
    assert.match((await page.textContent('#replay-note')) ?? '', /at turn 2/);
    await page.click('#forked-from');
    await page.waitForFunction((src) => document.querySelector('#chart-title')?.textContent === `session ${src}`, id);

    // Replay (through turn 3), held at its second turn's hook: the report shows the progress, then identical.
    const seen = server.payloads.length;
    server.hold = deferred();
    await page.waitForSelector('#turns li[data-turn="3"] button.replay:not([disabled])');
    await page.click('#turns li[data-turn="3"] button.replay');
    await server.received(seen + 1);
    await page.waitForSelector('#replay-report[data-status="running"]');
    await page.waitForFunction((src) => document.querySelector('#replay-of')?.textContent === src, id);
    await page.waitForFunction(() => document.querySelector('#replay-status')?.textContent?.includes('1 of 3 turns done'));
    assert.equal(await page.getAttribute('#replay-progress', 'value'), '1');
    const replayId = ((await title()) ?? '').replace(/^session /, '');
    const gate = server.hold;
    server.hold = null;
    gate.resolve();
    await page.waitForSelector('#replay-report[data-status="identical"]');
    assert.match((await page.textContent('#replay-status')) ?? '', /^identical: 3 of 3 turns/);
    assert.equal((await call(app.url, 'GET', `/sessions/${replayId}/replay-report`)).body.status, 'identical');
    await page.waitForFunction(() => document.querySelectorAll('#turns li[data-turn]').length === 3);

    // The hook changed: a replay from the source shows the first divergence, highlighted.
    assert.equal((await call(app.url, 'PATCH', '/config', { hooks: hooks(`${server.url}/v2`) })).status, 200);
    await page.click('#replay-of');
    await page.waitForFunction((src) => document.querySelector('#chart-title')?.textContent === `session ${src}`, id);
    await page.waitForSelector('#turns li[data-turn="3"] button.replay');
    await page.click('#turns li[data-turn="3"] button.replay');
    await page.waitForSelector('#replay-report[data-status="diverged"]');
    const divergedId = ((await title()) ?? '').replace(/^session /, '');
    const report = (await call(app.url, 'GET', `/sessions/${divergedId}/replay-report`)).body;
    assert.equal(report.status, 'diverged', JSON.stringify(report));
    assert.deepEqual([report.divergence.turn, report.divergence.path], [2, 'hooks[0].runtime.url']);
    assert.match((await page.textContent('#replay-status')) ?? '', /^diverged after 1 identical turn$/);
    assert.equal(await page.textContent('#divergence-turn'), '2 · “two”');
    assert.equal(await page.textContent('#divergence-path'), 'hooks[0].runtime.url');
    assert.match((await page.textContent('#divergence-call')) ?? '', /^0 /);
    assert.equal(await page.textContent('#divergence .recorded pre'), JSON.stringify(report.divergence.recorded, null, 1));
    assert.equal(await page.textContent('#divergence .now pre'), JSON.stringify(report.divergence.now, null, 1));
    assert.notEqual(report.divergence.recorded, report.divergence.now);
    const color = await page.$eval('#replay-report', (e) => getComputedStyle(e).borderColor);
    assert.equal(color, 'rgb(207, 34, 46)', 'the diverged report is drawn in red');

    const shot = await tmpDir('warren-shot-');
    t.after(() => shot.cleanup());
    const shotPath = join(shot.path, 'viewer-replay.png');
    await page.screenshot({ path: shotPath });
    if (!existsSync(SCREENSHOT) || process.env.WARREN_UPDATE_SCREENSHOT === '1') await copyFile(shotPath, SCREENSHOT);
    assert.deepEqual(pageErrors, []);
    await browser.close();
  });

  it("with API keys on: a read key's fork is refused in the page, a sessions key replays", { timeout: SLOW_TEST_MS }, async (t) => {
    const app = await startApp(t, [], { config: { rest: { auth: 'required' } } });
    const reader = await createKey(app, 'viewer', 'read');
    const worker = await createKey(app, 'ops', 'sessions');
    const c = new WarrenClient(app.url, { headers: { authorization: `Bearer ${worker}` } });
    const { session_id: id } = await c.createSession({ prompt: 'one', provider: 'scripted' });
    await c.continueSession(id, { prompt: 'two' });
    const { browser, page, pageErrors } = await openPage(t);
    await page.goto(`${app.url}/ui?kind=session&id=${id}`);
    await page.waitForSelector('#key-form:not([hidden])');
    await page.fill('#key-input', reader);
    await page.click('#key-form button[type="submit"]');
    await page.waitForSelector('#turns li[data-turn="2"]');
    const before = (await c.listSessions()).sessions.length;
    await page.click('#turns li[data-turn="1"] button.fork');
    await page.waitForSelector('#replay-note.refusal');
    assert.match((await page.textContent('#replay-note')) ?? '', /lacks the 'sessions' scope needed to fork \(it has: read\)/);
    assert.equal((await c.listSessions()).sessions.length, before, 'a refused fork makes no session');
    await page.click('#key-forget');
    await page.waitForSelector('#key-form:not([hidden])');
    await page.fill('#key-input', worker);
    await page.click('#key-form button[type="submit"]');
    await page.waitForSelector('#turns li[data-turn="2"] button.replay');
    await page.click('#turns li[data-turn="2"] button.replay');
    await page.waitForSelector('#replay-report[data-status="identical"]');
    await page.waitForFunction((src) => document.querySelector('#replay-of')?.textContent === src, id);
    assert.deepEqual(pageErrors, []);
    await browser.close();
  });
});
