// OpenTelemetry trace export of turns, against an in-test OTLP/HTTP receiver on loopback: `[telemetry]
// otlp_endpoint` switches it on (live, through PATCH /config); a turn with a tool call becomes one trace
// (turn → model calls, tool call, commit); a failed turn's span carries an error status; nothing is
// sent while the endpoint is unset. app.close() flushes, so the test gates on it (no sleeps).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WarrenClient } from '../../client/src/client.ts';
import { startApp } from '../helpers/app.ts';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
  status: { code: number; message?: string };
}

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: {
    resourceSpans: Array<{
      resource: { attributes: OtlpSpan['attributes'] };
      scopeSpans: Array<{ scope: { name: string }; spans: OtlpSpan[] }>;
    }>;
  };
}

async function receiver(t: { after(fn: () => Promise<void> | void): void }): Promise<{ url: string; requests: Received[] }> {
  const requests: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ path: req.url ?? '', headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

function spansOf(requests: Received[]): OtlpSpan[] {
  return requests.flatMap((r) => r.body.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans)));
}

const attr = (s: OtlpSpan, key: string) => s.attributes.find((a) => a.key === key)?.value;

describe('OTLP trace export', () => {
  it('exports a turn as one trace: turn, model calls, tool call and commit', async (t) => {
    const otlp = await receiver(t);
    const app = await startApp(t, [
      { tool_calls: [{ name: 'not_offered', args: {} }], usage: { input_tokens: 5, output_tokens: 2 } },
      { text: 'done', usage: { input_tokens: 9, output_tokens: 3 } },
      { error: { code: 'AGENT_ERROR', message: 'scripted failure' } },
    ]);
    const client = new WarrenClient(app.url);
    await client.patchConfig({ telemetry: { otlp_endpoint: otlp.url, service_name: 'warren-test', headers: { 'x-collector-key': 'k1' } } });
    const { session_id: id } = await client.createSession({ prompt: 'go', provider: 'scripted' });
    await assert.rejects(client.continueSession(id, { prompt: 'fail please' }));
    await app.close();

    assert.ok(otlp.requests.length >= 1);
    for (const r of otlp.requests) {
      assert.equal(r.path, '/v1/traces');
      assert.match(String(r.headers['content-type']), /^application\/json/);
      assert.equal(r.headers['x-collector-key'], 'k1');
      assert.deepEqual(attr({ attributes: r.body.resourceSpans[0].resource.attributes } as OtlpSpan, 'service.name'), {
        stringValue: 'warren-test',
      });
    }
    const spans = spansOf(otlp.requests);
    const turns = spans.filter((s) => s.name === 'turn');
    assert.equal(turns.length, 2);
    const ok = turns.find((s) => s.status.code === 1)!;
    const failed = turns.find((s) => s.status.code === 2)!;
    assert.match(failed.status.message ?? '', /scripted failure/);
    assert.notEqual(ok.traceId, failed.traceId);
    assert.match(ok.traceId, /^[0-9a-f]{32}$/);
    assert.match(ok.spanId, /^[0-9a-f]{16}$/);
    assert.equal(ok.parentSpanId, undefined);
    assert.deepEqual(attr(ok, 'warren.session.id'), { stringValue: id });
    const children = spans.filter((s) => s.traceId === ok.traceId && s !== ok);
    assert.deepEqual(children.map((s) => s.name).sort(), ['commit', 'model call', 'model call', 'tool not_offered']);
    for (const c of children) {
      assert.equal(c.parentSpanId, ok.spanId);
      assert.ok(BigInt(c.startTimeUnixNano) >= BigInt(ok.startTimeUnixNano), `${c.name} starts within the turn`);
      assert.ok(BigInt(c.endTimeUnixNano) <= BigInt(ok.endTimeUnixNano), `${c.name} ends within the turn`);
      assert.ok(BigInt(c.endTimeUnixNano) >= BigInt(c.startTimeUnixNano));
    }
    const calls = children.filter((s) => s.name === 'model call');
    assert.ok(calls.every((s) => s.kind === 3));
    assert.deepEqual(
      calls.map((s) => attr(s, 'gen_ai.usage.input_tokens')),
      [{ intValue: '5' }, { intValue: '9' }],
    );
    assert.equal(children.find((s) => s.name === 'tool not_offered')?.status.code, 2, 'the tool answered an error');
    const commit = children.find((s) => s.name === 'commit')!;
    assert.equal(commit.endTimeUnixNano, ok.endTimeUnixNano, 'the turn ends when its commit is durable');
  });

  it('sends nothing while no otlp_endpoint is configured', async (t) => {
    const otlp = await receiver(t);
    const app = await startApp(t);
    const client = new WarrenClient(app.url);
    await client.patchConfig({ telemetry: { service_name: 'unused' } });
    await client.createSession({ prompt: 'quiet', provider: 'scripted' });
    await app.close();
    assert.equal(otlp.requests.length, 0);
    assert.ok(otlp.url);
  });
});
