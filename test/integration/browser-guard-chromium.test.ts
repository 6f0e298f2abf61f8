// The browser guard against a real Chromium: a page served from another origin, and a page reached through
// a Host that is not loopback (DNS rebinding, mapped with --host-resolver-rules), try fetch with and without
// Content-Type, a form post, a WebSocket to /rpc and an MCP initialize. None reaches a handler and none
// changes state (checked through the API afterwards). Skips with a reason where Chromium is not installed.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { call, startApp } from '../helpers/app.ts';
import { chromiumSkipReason, launchChromium } from '../helpers/chromium.ts';

/** Runs every attempt from the page against `target`; resolves with what the page could observe. */
async function attempts(target: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const body = JSON.stringify({ prompt: 'from a web page', provider: 'scripted' });
  // No named inner functions: the body is serialised into the page (tsx would wrap them in a helper).
  const mcpInit = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'page', version: '1' } },
  });
  const cases: Array<[string, RequestInit, string]> = [
    ['no-content-type', { method: 'POST', body, mode: 'no-cors' }, '/sessions'],
    ['text-plain', { method: 'POST', body, headers: { 'content-type': 'text/plain' }, mode: 'no-cors' }, '/sessions'],
    ['json', { method: 'POST', body, headers: { 'content-type': 'application/json' }, mode: 'cors' }, '/sessions'],
    ['mcp-initialize', { method: 'POST', body: mcpInit, headers: { 'content-type': 'text/plain' }, mode: 'no-cors' }, '/mcp'],
  ];
  for (const [name, init, path] of cases) {
    try {
      const res = await fetch(target + path, init);
      out[name] = `status ${res.status}`;
    } catch (err) {
      out[name] = `blocked: ${String(err)}`;
    }
  }
  out.form = await new Promise<string>((resolve) => {
    const frame = document.createElement('iframe');
    frame.name = 'sink';
    document.body.appendChild(frame);
    frame.addEventListener('load', () => resolve('submitted'), { once: true });
    const form = document.createElement('form');
    form.method = 'POST';
    form.action = target + '/sessions';
    form.target = 'sink';
    form.enctype = 'text/plain';
    const input = document.createElement('input');
    input.name = '{"prompt":"form","provider":"scripted","x":"';
    input.value = '"}';
    form.appendChild(input);
    document.body.appendChild(form);
    form.submit();
  });
  out.websocket = await new Promise<string>((resolve) => {
    const ws = new WebSocket(target.replace(/^http/, 'ws') + '/rpc');
    ws.onopen = () => {
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'mob/list', params: {} }));
      resolve('open');
    };
    ws.onerror = () => resolve('refused');
  });
  return out;
}

describe('browser guard in Chromium', { skip: chromiumSkipReason }, () => {
  it('a foreign page and a rebound Host reach no handler and change nothing', async (t) => {
    const app = await startApp(t, []);
    const warrenPort = new URL(app.url).port;
    const before = await call(app.url, 'GET', '/sessions');
    // The attacker's page: another origin (another port) on loopback.
    const page = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><title>attacker</title><body></body>');
    });
    await new Promise<void>((r) => page.listen(0, '127.0.0.1', r));
    t.after(() => new Promise<void>((r) => page.close(() => r())));
    const pagePort = (page.address() as AddressInfo).port;
    const browser = await launchChromium(undefined, ['--host-resolver-rules=MAP rebind.test 127.0.0.1']);
    t.after(() => browser.close());

    const foreign = await browser.context.newPage();
    await foreign.goto(`http://127.0.0.1:${pagePort}/`);
    const cross = await foreign.evaluate(attempts, app.url);
    assert.equal(cross.websocket, 'refused', JSON.stringify(cross));
    assert.ok(!/status 200/.test(cross.json), `cors json fetch: ${cross.json}`);

    // DNS rebinding: the page's own name resolves to Warren's address; Host is rebind.test.
    const rebound = await browser.context.newPage();
    const nav = await rebound.goto(`http://rebind.test:${warrenPort}/ui`);
    assert.equal(nav?.status(), 403, 'the viewer is not served under a foreign Host');
    const same = await rebound.evaluate(attempts, `http://rebind.test:${warrenPort}`);
    assert.equal(same.websocket, 'refused', JSON.stringify(same));
    assert.equal(same.json, 'status 403', JSON.stringify(same));

    const after = await call(app.url, 'GET', '/sessions');
    assert.deepEqual(after.body, before.body, 'no session was created');
    assert.equal(app.provider.requests.length, 0, 'no turn ran');
    // The operator's own viewer keeps working.
    const own = await browser.context.newPage();
    const ui = await own.goto(`${app.url}/ui`);
    assert.equal(ui?.status(), 200);
    // The browser goes first: while it holds connections open, closing the servers it talks to waits
    // for them (about a minute). The t.after hooks stay for a test that failed before this line.
    await browser.close();
  });
});
