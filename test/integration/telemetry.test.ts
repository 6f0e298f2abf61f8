// OpenTelemetry trace export of turns (the OpenTelemetry JS SDK's OTLP/HTTP exporter, GenAI semantic
// conventions), against an OTLP/HTTP receiver on loopback started by the test. Every request it gets is
// decoded with the official OTLP definitions (the protobuf code generated from opentelemetry-proto, as
// published in @opentelemetry/otlp-transformer 0.216; JSON through the OTLP JSON mapping onto the same
// messages). A turn with a tool call is one trace: invoke_agent → chat, execute_tool, chat, commit; a
// failed turn's spans carry an error status and error.type. A collector that refuses connections never
// fails a turn, export obeys the outbound guard, and nothing is sent while no endpoint is configured.
// app.close() flushes, so the assertions gate on it (no sleeps, no timed assertions).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import generatedRoot from 'otlp-proto-definitions/build/src/generated/root.js';
import { WarrenClient } from '../../client/src/client.ts';
import { startApp } from '../helpers/app.ts';
import { poll } from '../helpers/wait.ts';

type AnyValue = { stringValue?: string; intValue?: string; boolValue?: boolean; doubleValue?: number; arrayValue?: { values: AnyValue[] } };
type KeyValue = { key: string; value: AnyValue };

interface DecodedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes?: KeyValue[];
  status?: { code?: number; message?: string };
}

interface DecodedRequest {
  resourceSpans: Array<{
    resource: { attributes: KeyValue[] };
    scopeSpans: Array<{ scope: { name: string; version?: string }; spans: DecodedSpan[] }>;
  }>;
}

interface MessageType {
  decode(buf: Uint8Array): unknown;
  fromObject(o: unknown): unknown;
  verify(m: unknown): string | null;
  toObject(m: unknown, o: Record<string, unknown>): DecodedRequest;
}

// The official definitions: protobufjs static code generated from the opentelemetry-proto .proto files.
const generated = generatedRoot as unknown as {
  opentelemetry: { proto: { collector: { trace: { v1: { ExportTraceServiceRequest: MessageType } } } } };
};
const ExportTraceServiceRequest = generated.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
const TO_OBJECT = { longs: String, enums: Number, bytes: String, defaults: false, arrays: true };
// protobufjs renders `bytes` as base64; OTLP ids read as hex.
const hexIds = (r: DecodedRequest): DecodedRequest => {
  for (const rs of r.resourceSpans)
    for (const ss of rs.scopeSpans)
      for (const s of ss.spans) {
        s.traceId = Buffer.from(s.traceId, 'base64').toString('hex');
        s.spanId = Buffer.from(s.spanId, 'base64').toString('hex');
        if (s.parentSpanId) s.parentSpanId = Buffer.from(s.parentSpanId, 'base64').toString('hex');
      }
  return r;
};

/** A binary protobuf body, decoded. */
function decodeProtobuf(body: Buffer): DecodedRequest {
  return hexIds(ExportTraceServiceRequest.toObject(ExportTraceServiceRequest.decode(body), TO_OBJECT));
}

/** A JSON body through the OTLP JSON mapping (ids are hex there, bytes elsewhere) onto the same messages. */
function decodeJson(body: Buffer): DecodedRequest {
  const json = JSON.parse(body.toString('utf8'), (key, value: unknown) =>
    (key === 'traceId' || key === 'spanId' || key === 'parentSpanId') && typeof value === 'string'
      ? Buffer.from(value, 'hex').toString('base64')
      : value,
  ) as unknown;
  const message = ExportTraceServiceRequest.fromObject(json);
  assert.equal(ExportTraceServiceRequest.verify(message), null, 'the JSON body maps onto ExportTraceServiceRequest');
  return hexIds(ExportTraceServiceRequest.toObject(message, TO_OBJECT));
}

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: DecodedRequest;
}

async function receiver(t: { after(fn: () => Promise<void> | void): void }): Promise<{ url: string; requests: Received[] }> {
  const requests: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const type = String(req.headers['content-type']);
      const body = type.startsWith('application/x-protobuf') ? decodeProtobuf(raw) : decodeJson(raw);
      requests.push({ path: req.url ?? '', headers: req.headers, body });
      // An empty ExportTraceServiceResponse in the request's encoding.
      res.writeHead(200, { 'content-type': type }).end(type.startsWith('application/json') ? '{}' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

/** A loopback port nothing listens on (a collector that is down). */
async function refusedUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** A logger whose warnings the test reads. */
function capturedLog(): { logger: pino.Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'warn' }, { write: (s: string) => lines.push(JSON.parse(s) as Record<string, unknown>) });
  return { logger, lines };
}

const spansOf = (requests: Received[]): DecodedSpan[] =>
  requests.flatMap((r) => r.body.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans)));

function attrs(s: { attributes?: KeyValue[] }): Record<string, unknown> {
  const plain = (v: AnyValue): unknown =>
    v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue ?? v.arrayValue?.values.map(plain)));
  return Object.fromEntries((s.attributes ?? []).map((a) => [a.key, plain(a.value)]));
}

const SPAN_KIND_INTERNAL = 1;
const SPAN_KIND_CLIENT = 3;
const STATUS_ERROR = 2;
const byStart = (a: DecodedSpan, b: DecodedSpan) => (BigInt(a.startTimeUnixNano) < BigInt(b.startTimeUnixNano) ? -1 : 1);

describe('OTLP trace export (OpenTelemetry SDK, GenAI conventions)', () => {
  it('exports a turn with a tool call as one trace, and a failed turn with an error status', async (t) => {
    const otlp = await receiver(t);
    const app = await startApp(t, [
      { tool_calls: [{ name: 'datetime', args: {}, id: 'dt_1' }], usage: { input_tokens: 5, output_tokens: 2 }, model: 'm-served-1' },
      { text: 'done', usage: { input_tokens: 9, output_tokens: 3, cache_read_tokens: 4 }, model: 'm-served-2' },
      { error: { code: 'AGENT_ERROR', message: 'scripted failure' } },
    ]);
    const client = new WarrenClient(app.url);
    // Switched on live; the SDK loads on demand.
    await client.patchConfig({ telemetry: { otlp_endpoint: otlp.url, service_name: 'warren-test', headers: { 'x-collector-key': 'k1' } } });
    const { session_id: id } = await client.createSession({
      prompt: 'go',
      provider: 'anthropic',
      model: 'm-requested',
      enable_builtins: true,
    });
    await assert.rejects(client.continueSession(id, { prompt: 'fail please' }));
    await app.close();

    assert.ok(otlp.requests.length >= 1, 'the collector got the spans by the time close() resolved');
    for (const r of otlp.requests) {
      assert.equal(r.path, '/v1/traces');
      assert.match(String(r.headers['content-type']), /^application\/x-protobuf/);
      assert.equal(r.headers['x-collector-key'], 'k1');
      const resource = attrs(r.body.resourceSpans[0].resource);
      assert.equal(resource['service.name'], 'warren-test');
      assert.equal(resource['telemetry.sdk.name'], 'opentelemetry');
      assert.equal(r.body.resourceSpans[0].scopeSpans[0].scope.name, 'warren');
    }
    const spans = spansOf(otlp.requests);
    const turns = spans.filter((s) => s.name === 'invoke_agent');
    assert.equal(turns.length, 2, `two turns in ${spans.map((s) => s.name).join(', ')}`);
    const [ok, failed] = turns.sort(byStart);
    assert.notEqual(ok.traceId, failed.traceId, 'a trace per turn');
    assert.match(ok.traceId, /^[0-9a-f]{32}$/);
    assert.match(ok.spanId, /^[0-9a-f]{16}$/);
    assert.equal(ok.parentSpanId, undefined);
    assert.equal(ok.kind, SPAN_KIND_INTERNAL);
    assert.notEqual(ok.status?.code, STATUS_ERROR);
    assert.deepEqual(
      { ...attrs(ok), 'warren.session.id': undefined },
      {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.provider.name': 'anthropic',
        'gen_ai.system': 'anthropic',
        'gen_ai.request.model': 'm-requested',
        'gen_ai.conversation.id': id,
        'gen_ai.usage.input_tokens': 14,
        'gen_ai.usage.output_tokens': 5,
        'warren.session.id': undefined,
        'warren.turn.outcome': 'succeeded',
        'warren.turn.model_calls': 2,
        'warren.turn.tool_calls': 1,
      },
    );

    // The tree: turn → chat (asks for the tool), execute_tool, chat (answers), commit; in that order.
    const children = spans.filter((s) => s.traceId === ok.traceId && s !== ok).sort(byStart);
    assert.deepEqual(
      children.map((s) => s.name),
      ['chat m-requested', 'execute_tool datetime', 'chat m-requested', 'commit'],
    );
    for (const c of children) {
      assert.equal(c.parentSpanId, ok.spanId, `${c.name} is a child of the turn`);
      assert.ok(BigInt(c.startTimeUnixNano) >= BigInt(ok.startTimeUnixNano), `${c.name} starts within the turn`);
      assert.ok(BigInt(c.endTimeUnixNano) <= BigInt(ok.endTimeUnixNano), `${c.name} ends within the turn`);
      assert.ok(BigInt(c.endTimeUnixNano) >= BigInt(c.startTimeUnixNano));
      assert.equal(attrs(c)['gen_ai.conversation.id'], id);
    }
    const [chat1, tool, chat2, commit] = children;
    assert.ok(BigInt(chat1.endTimeUnixNano) <= BigInt(tool.startTimeUnixNano), 'the tool runs after the call that asked for it');
    assert.ok(BigInt(tool.endTimeUnixNano) <= BigInt(chat2.startTimeUnixNano), 'the next call follows the tool');
    assert.equal(chat1.kind, SPAN_KIND_CLIENT);
    assert.deepEqual(attrs(chat1), {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.system': 'anthropic',
      'gen_ai.conversation.id': id,
      'gen_ai.request.model': 'm-requested',
      'gen_ai.request.max_tokens': attrs(chat1)['gen_ai.request.max_tokens'],
      'gen_ai.response.model': 'm-served-1',
      'gen_ai.response.finish_reasons': ['tool_use'],
      'gen_ai.usage.input_tokens': 5,
      'gen_ai.usage.output_tokens': 2,
      'warren.model_call': 1,
    });
    assert.equal(typeof attrs(chat1)['gen_ai.request.max_tokens'], 'number');
    assert.equal(attrs(chat2)['gen_ai.response.model'], 'm-served-2');
    assert.deepEqual(attrs(chat2)['gen_ai.response.finish_reasons'], ['end_turn']);
    assert.equal(attrs(chat2)['gen_ai.usage.input_tokens'], 9);
    assert.equal(attrs(chat2)['gen_ai.usage.cache_read.input_tokens'], 4);
    assert.equal(tool.kind, SPAN_KIND_INTERNAL);
    assert.notEqual(tool.status?.code, STATUS_ERROR, 'datetime answered');
    assert.deepEqual(
      { name: attrs(tool)['gen_ai.tool.name'], id: attrs(tool)['gen_ai.tool.call.id'], op: attrs(tool)['gen_ai.operation.name'] },
      { name: 'datetime', id: 'dt_1', op: 'execute_tool' },
    );
    assert.equal(commit.endTimeUnixNano, ok.endTimeUnixNano, 'the turn ends when its commit is durable');
    // No content is recorded: no prompt, reply or tool output in any attribute.
    const everything = JSON.stringify(spans);
    for (const text of ['go', 'done', 'fail please'].map((s) => `"${s}"`)) assert.ok(!everything.includes(text), `${text} is not recorded`);

    // The failed turn: its span and its model call carry the error.
    assert.equal(failed.status?.code, STATUS_ERROR);
    assert.match(failed.status?.message ?? '', /scripted failure/);
    assert.equal(attrs(failed)['error.type'], 'AGENT_ERROR');
    assert.equal(attrs(failed)['warren.turn.outcome'], 'failed');
    const failedCall = spans.find((s) => s.traceId === failed.traceId && s.name.startsWith('chat '));
    assert.ok(failedCall, 'the failed model call is a span');
    assert.equal(failedCall.status?.code, STATUS_ERROR);
    assert.equal(attrs(failedCall)['error.type'], 'AGENT_ERROR');
    assert.equal(attrs(failedCall)['gen_ai.usage.input_tokens'], undefined);
  });

  it('speaks OTLP/HTTP JSON when asked, from a config written before start', async (t) => {
    const otlp = await receiver(t);
    const app = await startApp(t, [{ text: 'hi', usage: { input_tokens: 3, output_tokens: 1 } }], {
      config: { telemetry: { otlp_endpoint: `${otlp.url}/v1/traces`, protocol: 'http/json', flush_interval_ms: 10 } },
    });
    const client = new WarrenClient(app.url);
    const { session_id: id } = await client.createSession({ prompt: 'hello', provider: 'scripted' });
    await app.close();
    assert.ok(otlp.requests.length >= 1);
    for (const r of otlp.requests) {
      assert.equal(r.path, '/v1/traces');
      assert.match(String(r.headers['content-type']), /^application\/json/);
    }
    const spans = spansOf(otlp.requests);
    const turn = spans.find((s) => s.name === 'invoke_agent');
    assert.ok(turn);
    assert.equal(attrs(turn)['gen_ai.conversation.id'], id);
    assert.equal(attrs(turn)['gen_ai.provider.name'], 'scripted');
    const chat = spans.find((s) => s.name === 'chat echo-model' || s.name.startsWith('chat '));
    assert.ok(chat);
    assert.equal(chat.parentSpanId, turn.spanId);
    assert.equal(attrs(chat)['gen_ai.usage.output_tokens'], 1);
  });

  it('a collector that refuses connections never fails a turn; the failure is logged', async (t) => {
    const { logger, lines } = capturedLog();
    const url = await refusedUrl();
    const app = await startApp(t, [], {
      logger,
      config: { telemetry: { otlp_endpoint: url, flush_interval_ms: 10, max_queue: 4, export_timeout_ms: 200 } },
    });
    const client = new WarrenClient(app.url);
    const { session_id: id } = await client.createSession({ prompt: 'one', provider: 'scripted' });
    for (const prompt of ['two', 'three', 'four', 'five']) {
      const r = await client.continueSession(id, { prompt });
      assert.equal(r.text, `echo: ${prompt}`);
    }
    const failure = await poll('the export failure to be logged', () =>
      lines.find((l) => l.msg === 'trace export failed; the batch is dropped'),
    );
    assert.match(String(failure.reason), /ECONNREFUSED/);
    await app.close();
  });

  it('export connects under the outbound rules: a denied collector gets nothing', async (t) => {
    const otlp = await receiver(t);
    const { logger, lines } = capturedLog();
    const app = await startApp(t, [], {
      logger,
      config: {
        network: { deny_cidrs: ['127.0.0.0/8'] },
        telemetry: { otlp_endpoint: otlp.url, flush_interval_ms: 10, export_timeout_ms: 200 },
      },
    });
    const client = new WarrenClient(app.url);
    await client.createSession({ prompt: 'quiet', provider: 'scripted' });
    const refusal = await poll('the refused export to be logged', () =>
      lines.find((l) => l.msg === 'trace export failed; the batch is dropped'),
    );
    assert.match(String(refusal.reason), /127\.0\.0\.0\/8 of \[network\] deny_cidrs/);
    await app.close();
    assert.equal(otlp.requests.length, 0);
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
