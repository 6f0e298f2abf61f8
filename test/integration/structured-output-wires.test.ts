// Structured output against loopback fakes of the four vendor wires, through the real server: the
// extraction request carries the schema in each vendor's native slot, and no tools.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { createApp } from '../../app.ts';
import { call } from '../helpers/app.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';
import { textResponder, type Wire } from '../helpers/vendor-replies.ts';
import { startFakeVendor, type FakeRequest } from '../providers/fake-vendor.ts';

const SCHEMA = { type: 'object', properties: { city: { type: 'string', maxLength: 40 } }, required: ['city'] };

/** Where each wire puts the schema, read from the vendor request body. */
const SLOT: Record<Wire, (body: Record<string, any>) => unknown> = {
  anthropic: (b) => b.output_config?.format?.type === 'json_schema' && b.output_config.format.schema,
  openai: (b) => b.text?.format?.type === 'json_schema' && b.text.format.name === 'place' && b.text.format.schema,
  gemini: (b) => b.generationConfig?.responseMimeType === 'application/json' && b.generationConfig.responseJsonSchema,
  self_hosted: (b) =>
    b.response_format?.type === 'json_schema' && b.response_format.json_schema.name === 'place' && b.response_format.json_schema.schema,
};

function hasTools(wire: Wire, req: FakeRequest): boolean {
  const tools = req.body.tools as unknown[] | undefined;
  return Array.isArray(tools) && tools.length > 0 && (wire !== 'gemini' || tools.some((t) => Object.keys(t as object).length > 0));
}

describe('structured output on the vendor wires', () => {
  for (const wire of ['anthropic', 'openai', 'gemini', 'self_hosted'] as const) {
    it(`${wire}: extraction uses the native JSON-schema slot, without tools`, async (t) => {
      const vendor = await startFakeVendor([textResponder(wire, 'It is Paris.'), textResponder(wire, '{"city": "Paris"}')]);
      const dir = await tmpDir('warren-so-wire-');
      const env: NodeJS.ProcessEnv = {
        PATH: process.env.PATH,
        ANTHROPIC_API_KEY: 'k',
        OPENAI_API_KEY: 'k',
        GEMINI_API_KEY: 'k',
        ANTHROPIC_BASE_URL: vendor.url,
        OPENAI_BASE_URL: vendor.url,
        GEMINI_BASE_URL: vendor.url,
      };
      const app = await createApp({
        host: '127.0.0.1',
        port: 0,
        stateRoot: dir.path,
        contextRoot: dir.path,
        realm: 'wires',
        logger: pino({ level: 'silent' }),
        env,
      });
      t.after(async () => {
        await app.close();
        await vendor.close();
        await dir.cleanup();
      });
      if (wire === 'self_hosted') {
        const patched = await call(app.url, 'PATCH', '/config', {
          providers: { self_hosted: { base_url: vendor.url, default_model: 'local-model' } },
        });
        assert.equal(patched.status, 200, JSON.stringify(patched.body));
      }
      const res = await call(app.url, 'POST', '/sessions', {
        prompt: 'Where is the Louvre?',
        provider: wire,
        enable_builtins: true,
        output_schema: { schema: SCHEMA, name: 'place', strict: wire === 'openai' },
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body.structured_output, { city: 'Paris' });
      assert.equal(res.body.text, 'It is Paris.');
      assert.equal(res.body.turns, 2);
      assert.equal(vendor.requests.length, 2);
      const [main, extraction] = vendor.requests;
      assert.ok(hasTools(wire, main), 'the main call offers the tools');
      assert.ok(!SLOT[wire](main.body), 'no schema on the main call');
      const sent = SLOT[wire](extraction.body) as { properties: { city: Record<string, unknown> } } | false;
      assert.ok(sent, `schema in the ${wire} slot: ${JSON.stringify(extraction.body)}`);
      assert.ok(!hasTools(wire, extraction), 'no tools on the extraction call');
      if (wire === 'anthropic') {
        assert.equal(sent.properties.city.maxLength, undefined, 'dropped for Anthropic');
        assert.equal(res.body.schema_warnings[0].path, '/properties/city/maxLength');
      } else if (wire === 'gemini') {
        assert.equal(sent.properties.city.maxLength, undefined, 'dropped for Gemini');
        assert.equal(res.body.schema_warnings[0].provider, 'gemini');
      } else {
        assert.equal(sent.properties.city.maxLength, 40);
        assert.ok(!('schema_warnings' in res.body));
      }
    });
  }

  it('a provider configured without a JSON-schema slot gets the schema in the prompt only', async (t) => {
    const vendor = await startFakeVendor([textResponder('self_hosted', 'Paris'), textResponder('self_hosted', '{"city": "Paris"}')]);
    const dir = await tmpDir('warren-so-prompt-');
    const app = await createApp({
      host: '127.0.0.1',
      port: 0,
      stateRoot: dir.path,
      contextRoot: dir.path,
      realm: 'wires',
      logger: pino({ level: 'silent' }),
      env: { PATH: process.env.PATH },
    });
    t.after(async () => {
      await app.close();
      await vendor.close();
      await dir.cleanup();
    });
    await call(app.url, 'PATCH', '/config', {
      providers: { self_hosted: { base_url: vendor.url, default_model: 'm', native_json_schema: false } },
    });
    const res = await call(app.url, 'POST', '/sessions', { prompt: 'where?', provider: 'self_hosted', output_schema: SCHEMA });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.structured_output, { city: 'Paris' });
    const extraction = vendor.requests[1].body as { response_format?: unknown; messages: Array<{ role: string; content: string }> };
    assert.equal(extraction.response_format, undefined);
    assert.match(extraction.messages.at(-1)!.content, /must match this JSON Schema:\n\{"type":"object"/);
  });
});
