// The actor viewer (/ui) in a real headless Chromium against a running Warren: the page lists the
// session with its time in state, draws its machine from the definition (elkjs layout), and while a turn
// runs the highlighted state goes running -> idle, fed by the inspection stream, with the model call in
// flight (provider, model, bytes) beside it. With API keys on, the page asks for a key, shows a read key's
// interrupt refused, and a sessions key's interrupt ends the turn. A mob's members are listed under it.
// Saves the README screenshot. Each test closes its browser before its servers (a server's close waits for
// the connections a browser still holds).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, stat } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WarrenClient } from '../../client/src/client.ts';
import { call, startApp } from '../helpers/app.ts';
import { chromiumSkipReason, openPage } from '../helpers/chromium.ts';
import { deferred } from '../helpers/gates.ts';
import { createKey } from '../helpers/keys-cli.ts';
import { rpcOk, TEAM } from '../helpers/mob-driver.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';
import { poll, within, SLOW_TEST_MS } from '../helpers/wait.ts';
import type { ProviderRequest } from '../../providers/provider.ts';
import { echoReply } from '../../providers/scripted.ts';
import { plainText } from '../../providers/transcript-map.ts';

function lastUser(req: ProviderRequest): string {
  const u = [...req.messages].reverse().find((m) => m.role === 'user');
  return u && u.role === 'user' ? plainText(u.content) : '';
}

const SCREENSHOT = fileURLToPath(new URL('../../docs/viewer.png', import.meta.url));

describe('actor viewer in Chromium', { skip: chromiumSkipReason }, () => {
  it('highlights the running state during a turn and idle after it', async (t) => {
    const gate = deferred();
    // Only the turn the page watches holds, after two deltas, until the gate opens; every other call echoes.
    const app = await startApp(t, (req) => {
      const last = req.messages.at(-1);
      return last?.role === 'user' && last.content === 'think about it'
        ? { chunks: ['thinking ', 'about ', 'it'], holdAfter: { chunks: 2, until: gate.promise } }
        : echoReply(req);
    });
    const client = new WarrenClient(app.url);
    const { session_id: id } = await client.createSession({ prompt: 'hello', provider: 'scripted', labels: { demo: 'viewer' } });
    await client.createSession({ prompt: 'a second session', provider: 'scripted' });
    const { browser, page, pageErrors } = await openPage(t);
    await page.goto(`${app.url}/ui`);
    await page.waitForSelector('body[data-connected="true"]');
    // Each row shows how long its actor has been in its state.
    await page.waitForSelector(`tr[data-actor-id="${id}"] td.since`);
    assert.match((await page.textContent(`tr[data-actor-id="${id}"] td.since`)) ?? '', /^\d+\.\d s$/);
    await page.click(`tr[data-actor-id="${id}"]`);
    const active = () =>
      page.evaluate(() => document.querySelector('#chart .node[data-active="true"]')?.getAttribute('data-state-id') ?? null);
    await page.waitForFunction(
      () => document.querySelector('#chart .node[data-active="true"]')?.getAttribute('data-state-id') === 'session.idle',
    );
    // The chart is the machine's own definition: every state node is drawn, nested ones inside their parent.
    const drawn = await page.evaluate(() => [...document.querySelectorAll('#chart .node')].map((n) => n.getAttribute('data-state-id')));
    for (const s of [
      'session.idle',
      'session.running',
      'session.running.calling_model',
      'session.running.committing',
      'session.held',
      'session.archived',
    ]) {
      assert.ok(drawn.includes(s), `state ${s} drawn`);
    }
    assert.equal(
      await page.evaluate(() =>
        document.querySelector('[data-state-id="session.running.calling_model"]')?.parentElement?.getAttribute('data-state-id'),
      ),
      'session.running',
    );
    // Record every highlight change from here on.
    await page.evaluate(() => {
      const log: string[] = [];
      (window as unknown as { activeLog: string[] }).activeLog = log;
      new MutationObserver(() => {
        const now = document.querySelector('#chart .node[data-active="true"]')?.getAttribute('data-state-id');
        if (now && log.at(-1) !== now) log.push(now);
      }).observe(document.querySelector('#chart')!, { attributes: true, subtree: true, attributeFilter: ['data-active'] });
    });
    const turn = client.continueSession(id, { prompt: 'think about it' });
    await page.waitForFunction(
      () => document.querySelector('#chart .node[data-active="true"]')?.getAttribute('data-state-id') === 'session.running.calling_model',
    );
    await page.waitForSelector('#recent li');
    await page.waitForFunction(() => document.querySelector('#detail-summary')?.textContent?.includes('calling_model'));
    // The model call in flight: provider, model, the two deltas received so far, and a live elapsed time.
    await page.waitForFunction(() => document.querySelector('#call-received')?.textContent?.includes('2 text deltas'));
    assert.equal(await page.getAttribute('#model-call', 'data-provider'), 'scripted');
    assert.equal(await page.getAttribute('#model-call', 'data-model'), app.provider.requests.at(-1)?.model);
    assert.match((await page.textContent('#model-call')) ?? '', /^#1 scripted \/ \S+/);
    assert.match((await page.textContent('#call-received')) ?? '', /^15 B · 2 text deltas/);
    assert.equal(await page.isVisible('#interrupt'), true, 'a running session offers its interrupt');
    // "in state for" and the call's elapsed time tick on their own (no new transition arrives meanwhile).
    const age = (await page.textContent('#state-age')) ?? '';
    assert.match(age, /^\d+\.\d s$/);
    await page.waitForFunction((before) => document.querySelector('#state-age')?.textContent !== before, age);
    const waited = (await page.textContent('#call-age')) ?? '';
    await page.waitForFunction((before) => document.querySelector('#call-age')?.textContent !== before, waited);
    assert.match((await page.textContent('#current-age')) ?? '', /^for \d+\.\d s$/);
    const shot = await tmpDir('warren-shot-');
    t.after(() => shot.cleanup());
    const shotPath = join(shot.path, 'viewer.png');
    await page.screenshot({ path: shotPath });
    assert.ok((await stat(shotPath)).size > 10_000, 'a real screenshot');
    // The README's picture: written when missing, or refreshed on request (keeps `npm test` from dirtying the tree).
    if (!existsSync(SCREENSHOT) || process.env.WARREN_UPDATE_SCREENSHOT === '1') await copyFile(shotPath, SCREENSHOT);
    // A detail read while the turn runs, answered only after the turn ended (a slow answer on a busy
    // server): it describes the running state, and must not move the highlight back from idle.
    const staleRead = deferred('a detail read of the running session (the page polls it while it runs)');
    const release = deferred();
    let held = false;
    await page.route(`**/inspect/actors/session/${id}`, async (route) => {
      if (held) return route.continue();
      held = true;
      const response = await route.fetch();
      staleRead.resolve();
      await release.promise;
      await route.fulfill({ response });
    });
    await staleRead.promise;
    gate.resolve();
    assert.equal((await turn).text, 'thinking about it');
    await page.waitForFunction(
      () => document.querySelector('#chart .node[data-active="true"]')?.getAttribute('data-state-id') === 'session.idle',
    );
    const stale = page.waitForResponse((r) => r.url().endsWith(`/inspect/actors/session/${id}`));
    release.resolve();
    await stale;
    const log = await page.evaluate(() => (window as unknown as { activeLog: string[] }).activeLog);
    const running = log.indexOf('session.running.calling_model');
    assert.ok(running >= 0, `highlight went through running: ${log.join(' > ')}`);
    assert.ok(log.lastIndexOf('session.idle') > running, `then idle: ${log.join(' > ')}`);
    assert.equal(await active(), 'session.idle');
    // Counts per state and the label filter.
    await page.waitForFunction(() => document.querySelector('.chip[data-state="idle"] b')?.textContent === '2');
    // After the turn: no turn in flight, no interrupt button.
    await page.waitForFunction(() => document.querySelector('#turn-box')?.hasAttribute('hidden'));
    await page.fill('#f-label', 'demo=viewer');
    await page.waitForFunction(() => document.querySelectorAll('#actors tbody tr').length === 1);
    // By now the stale answer has long been read: the highlight never went back to a running state.
    const after = await page.evaluate(() => (window as unknown as { activeLog: string[] }).activeLog);
    const idleAt = after.indexOf('session.idle', running);
    assert.deepEqual(
      after.slice(idleAt).filter((s) => s.startsWith('session.running')),
      [],
      `no running state after idle: ${after.join(' > ')}`,
    );
    assert.equal(await active(), 'session.idle');
    assert.deepEqual(pageErrors, []);
    // The browser goes first: a server's close otherwise waits for the connections it holds.
    await browser.close();
  });

  it(
    "with API keys on: asks for a key, refuses a read key's interrupt in the page, and a sessions key interrupts the turn",
    { timeout: SLOW_TEST_MS },
    async (t) => {
      const app = await startApp(t, (req) => (lastUser(req) === 'hold on' ? { waitFor: new Promise<void>(() => {}) } : echoReply(req)), {
        config: { rest: { auth: 'required' } },
      });
      const reader = await createKey(app, 'viewer', 'read');
      const worker = await createKey(app, 'ops', 'sessions');
      const c = new WarrenClient(app.url, { headers: { authorization: `Bearer ${worker}` } });
      const { session_id: id } = await c.createSession({ prompt: 'hi', provider: 'scripted' });
      const turn = c.continueSession(id, { prompt: 'hold on' }).then(
        () => 'finished',
        (err: unknown) => err,
      );
      await poll('the turn to be held in its model call', async () => (await c.sessionStatus(id)).phase === 'calling_model');
      const { browser, page, pageErrors } = await openPage(t);
      await page.goto(`${app.url}/ui`);
      // The page itself loads without a key; its first data request answers 401 and the page asks for one.
      await page.waitForSelector('#key-form:not([hidden])');
      assert.match((await page.textContent('#key-note')) ?? '', /requires an API key/);
      assert.equal(await page.getAttribute('body', 'data-connected'), 'false');
      await page.fill('#key-input', reader);
      await page.click('#key-form button[type="submit"]');
      // The inspection stream is read with fetch, so it carries the key too.
      await page.waitForSelector('body[data-connected="true"]');
      assert.equal(await page.evaluate(() => sessionStorage.getItem('warren.viewer.key')), reader, 'kept in this tab');
      await page.click(`tr[data-actor-id="${id}"]`);
      await page.waitForSelector('#interrupt:not([hidden])');
      await page.click('#interrupt');
      await page.waitForSelector('#action-note.refusal');
      assert.match((await page.textContent('#action-note')) ?? '', /lacks the 'sessions' scope needed to interrupt \(it has: read\)/);
      assert.equal((await c.sessionStatus(id)).state, 'running', 'a refused interrupt changes nothing');
      // Another key: forget this one; the page asks again.
      await page.click('#key-forget');
      await page.waitForSelector('#key-form:not([hidden])');
      await page.fill('#key-input', worker);
      await page.click('#key-form button[type="submit"]');
      await page.waitForSelector('#interrupt:not([hidden])');
      await page.click('#interrupt');
      await page.waitForFunction(() => document.querySelector('#action-note')?.textContent === 'interrupt sent');
      assert.notEqual(await within('the interrupted turn to end', turn), 'finished');
      const ledger = await c.ledger(id);
      const failed = ledger.events.filter((e) => e.payload.type === 'run_failed').at(-1);
      assert.equal((failed?.payload as { error_report?: { class?: string } } | undefined)?.error_report?.class, 'interrupted');
      await page.waitForFunction(() => document.querySelector('#current-state')?.textContent === 'idle');
      await page.waitForFunction(() => document.querySelector('#interrupt')?.hasAttribute('hidden'));
      assert.deepEqual(pageErrors, []);
      await browser.close();
    },
  );

  it("lists a mob's member actors under the mob, each with its state and time in state", async (t) => {
    const app = await startApp(t);
    await rpcOk(app.url, 'mob/create', { mob_id: 'crew', definition: { members: TEAM.members } });
    assert.equal((await call(app.url, 'POST', '/mob/crew/wait-kickoff')).status, 200);
    const { browser, page, pageErrors } = await openPage(t);
    await page.goto(`${app.url}/ui`);
    await page.waitForSelector('tr[data-actor-id="crew"]');
    const under = () =>
      page.evaluate(() => {
        const rows = [...document.querySelectorAll<HTMLTableRowElement>('#actors tbody tr')];
        const i = rows.findIndex((r) => r.dataset.actorId === 'crew');
        return rows.slice(i + 1, i + 4).map((r) => ({
          id: r.dataset.actorId,
          parent: r.dataset.parentId,
          name: r.querySelector('td.id')?.textContent,
          state: r.querySelector('td.state')?.textContent,
          since: r.querySelector('td.since')?.textContent,
        }));
      });
    const rows = await poll('three member rows under the mob', async () => {
      const r = await under();
      return r.length === 3 && r.every((x) => x.parent === 'crew' && x.state === 'active') ? r : undefined;
    });
    assert.deepEqual(
      rows.map((r) => [r.id, r.name]),
      [
        ['crew/planner', 'planner'],
        ['crew/writer', 'writer'],
        ['crew/reviewer', 'reviewer'],
      ],
    );
    for (const r of rows) assert.match(r.since ?? '', /^\d+\.\d s$/, r.id);
    assert.equal(await page.locator('tr[data-actor-id="crew/writer"]').count(), 1, 'a member is listed once, under its mob');
    // The mob's detail lists its members; a member links to its session.
    await page.click('tr[data-actor-id="crew"]');
    await page.waitForFunction(() => document.querySelectorAll('#members li').length === 3);
    await page.click('tr[data-actor-id="crew/writer"]');
    await page.waitForSelector('#member-session');
    const sessionId = (await page.textContent('#member-session')) ?? '';
    await page.click('#member-session');
    await page.waitForFunction((sid) => document.querySelector('#chart-title')?.textContent === `session ${sid}`, sessionId);
    assert.deepEqual(pageErrors, []);
    await browser.close();
  });
});
