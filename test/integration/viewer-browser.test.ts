// The actor viewer (/ui) in a real headless Chromium against a running Warren: the page lists the
// session, draws its machine from the definition (elkjs layout), and while a turn runs the highlighted
// state goes running -> idle, fed by the inspection stream. Saves the README screenshot.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, stat } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WarrenClient } from '../../client/src/client.ts';
import { startApp } from '../helpers/app.ts';
import { chromiumSkipReason, launchChromium } from '../helpers/chromium.ts';
import { deferred } from '../helpers/gates.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';
import { echoReply } from '../../providers/scripted.ts';

const SCREENSHOT = fileURLToPath(new URL('../../docs/viewer.png', import.meta.url));

describe('actor viewer in Chromium', { skip: chromiumSkipReason }, () => {
  it('highlights the running state during a turn and idle after it', async (t) => {
    const gate = deferred();
    // Only the turn the page watches waits for the gate; every other call echoes.
    const app = await startApp(t, (req) => {
      const last = req.messages.at(-1);
      return last?.role === 'user' && last.content === 'think about it'
        ? { chunks: ['thinking ', 'about ', 'it'], waitFor: gate.promise }
        : echoReply(req);
    });
    const client = new WarrenClient(app.url);
    const { session_id: id } = await client.createSession({ prompt: 'hello', provider: 'scripted', labels: { demo: 'viewer' } });
    await client.createSession({ prompt: 'a second session', provider: 'scripted' });
    const browser = await launchChromium();
    t.after(() => browser.close());
    const page = await browser.context.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (err) => pageErrors.push(String(err)));
    await page.goto(`${app.url}/ui`);
    await page.waitForSelector('body[data-connected="true"]');
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
    const shot = await tmpDir('warren-shot-');
    t.after(() => shot.cleanup());
    const shotPath = join(shot.path, 'viewer.png');
    await page.screenshot({ path: shotPath });
    assert.ok((await stat(shotPath)).size > 10_000, 'a real screenshot');
    // The README's picture: written when missing, or refreshed on request (keeps `npm test` from dirtying the tree).
    if (!existsSync(SCREENSHOT) || process.env.WARREN_UPDATE_SCREENSHOT === '1') await copyFile(shotPath, SCREENSHOT);
    gate.resolve();
    assert.equal((await turn).text, 'thinking about it');
    await page.waitForFunction(
      () => document.querySelector('#chart .node[data-active="true"]')?.getAttribute('data-state-id') === 'session.idle',
    );
    const log = await page.evaluate(() => (window as unknown as { activeLog: string[] }).activeLog);
    const running = log.indexOf('session.running.calling_model');
    assert.ok(running >= 0, `highlight went through running: ${log.join(' > ')}`);
    assert.ok(log.lastIndexOf('session.idle') > running, `then idle: ${log.join(' > ')}`);
    assert.equal(await active(), 'session.idle');
    // Counts per state and the label filter.
    await page.waitForFunction(() => document.querySelector('.chip[data-state="idle"] b')?.textContent === '2');
    await page.fill('#f-label', 'demo=viewer');
    await page.waitForFunction(() => document.querySelectorAll('#actors tbody tr').length === 1);
    assert.deepEqual(pageErrors, []);
  });
});
