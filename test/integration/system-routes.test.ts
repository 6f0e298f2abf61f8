// test/integration/system-routes.test.ts: every observation and system route through the real server
// (createApp on 127.0.0.1:0), on both HTTP transports (SPEC.md "Observation and system routes";
// wire-notes §2.8, §11 items 21-22).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { AUTH_ROUTES } from '../../contracts/routes-auth.ts';
import { MCP_ROUTES } from '../../contracts/mcp.ts';
import { SKILL_ROUTES } from '../../contracts/skills.ts';
import { MCP_ENDPOINT_ROUTES } from '../../contracts/mcp-endpoint.ts';
import { COMMS_ROUTES } from '../../contracts/routes-comms.ts';
import { MOB_ROUTES } from '../../contracts/routes-mob.ts';
import { HELP_ROUTES } from '../../contracts/routes-help.ts';
import { SESSION_ROUTES } from '../../contracts/routes-sessions.ts';
import { OBSERVE_ROUTES } from '../../contracts/routes-observe.ts';
import { SYSTEM_ROUTES } from '../../contracts/routes-system.ts';
import { WORKGRAPH_ROUTES } from '../../contracts/workgraph.ts';
import { DETACHED_ROUTES } from '../../contracts/detached.ts';
import { EXTENSION_ROUTES } from '../../contracts/extensions.ts';
import { WEBHOOK_ROUTES } from '../../contracts/webhooks.ts';
import { uwsSkip } from '../helpers/absent.ts';
import { modelCatalog } from '../../providers/catalog.ts';
import { call, startApp } from '../helpers/app.ts';
import { SCHEDULE_ROUTES } from '../../contracts/schedule.ts';
import { PROTOCOL_ROUTES } from '../../contracts/routes-protocols.ts';
import { LANGGRAPH_ROUTES } from '../../contracts/routes-langgraph.ts';
import { A2A_ROUTES } from '../../contracts/routes-a2a.ts';
import { REPLAY_ROUTES } from '../../contracts/replay.ts';

const CATALOG = [
  ...SYSTEM_ROUTES,
  ...SESSION_ROUTES,
  ...AUTH_ROUTES,
  ...MCP_ROUTES,
  ...MCP_ENDPOINT_ROUTES,
  ...OBSERVE_ROUTES,
  ...WORKGRAPH_ROUTES,
  ...HELP_ROUTES,
  ...EXTENSION_ROUTES,
  ...WEBHOOK_ROUTES,
  ...DETACHED_ROUTES,
  ...SCHEDULE_ROUTES,
  ...SKILL_ROUTES,
  ...COMMS_ROUTES,
  ...MOB_ROUTES,
  ...PROTOCOL_ROUTES,
  ...LANGGRAPH_ROUTES,
  ...A2A_ROUTES,
  ...REPLAY_ROUTES,
];
const UWS_SKIP = uwsSkip();
const PACKAGE_VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** The fixed report order (wire-notes §2.8), spelled out here so drift in the contract shows up. */
const CAPABILITY_ORDER = [
  'sessions',
  'streaming',
  'structured_output',
  'hooks',
  'builtins',
  'shell',
  'comms',
  'memory_store',
  'schedule',
  'work_graph',
  'session_store',
  'session_compaction',
  'skills',
  'mcp_live',
];
const FEATURE_FLAGS = [
  'runtime_backed_sessions',
  'mobs',
  'mcp_live',
  'comms',
  'blobs',
  'session_events',
  'session_streams',
  'schedules',
  'skills',
  'event_replay',
  'artifacts',
  'approvals',
  'external_members',
  'secure_remote_rpc',
  'multi_host_mobs',
  'durable_jobs',
];
const HEALTH_KEYS = ['session_durability', 'session_liveness', 'session_run_start', 'session_runtime_loop', 'unmeasured:jobs'];

/** `"Available"` or exactly one PascalCase key with its one string member (wire-notes §11 item 21). */
function assertStatusSpelling(id: string, status: unknown): void {
  if (status === 'Available') return;
  assert.ok(typeof status === 'object' && status !== null, `${id}: status ${JSON.stringify(status)}`);
  const entries = Object.entries(status);
  assert.equal(entries.length, 1, `${id}: one status key`);
  const [key, inner] = entries[0];
  const member = { DisabledByPolicy: 'description', NotCompiled: 'feature', NotSupportedByProtocol: 'reason' }[key];
  assert.ok(member, `${id}: unknown status spelling ${key}`);
  assert.deepEqual(Object.keys(inner as object), [member], `${id}: ${key} members`);
  assert.equal(typeof (inner as Record<string, unknown>)[member], 'string');
}

function statusOf(body: { capabilities: Array<{ id: string; status: unknown }> }, id: string): unknown {
  return body.capabilities.find((c) => c.id === id)?.status;
}

/** Every `$ref` in `doc` (JSON pointers into the document itself). */
function refsOf(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) refsOf(v, out);
  else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else refsOf(v, out);
    }
  }
  return out;
}

for (const transport of ['uws', 'node'] as const) {
  describe(`system routes (${transport})`, { skip: transport === 'uws' ? (UWS_SKIP ?? false) : false }, () => {
    const opts = { httpTransport: transport };

    it('GET /health answers the plain text ok', async (t) => {
      const app = await startApp(t, [], opts);
      assert.equal(app.transport, transport);
      const res = await fetch(`${app.url}/health`);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
      assert.equal(await res.text(), 'ok');
    });

    it('GET /config has the envelope members and no resolved_paths by default', async (t) => {
      const app = await startApp(t, [], opts);
      const res = await call(app.url, 'GET', '/config');
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      assert.deepEqual(Object.keys(res.body).sort(), ['backend', 'config', 'generation', 'instance_id', 'realm_id']);
      assert.equal(res.body.realm_id, 'test-realm');
      assert.equal(res.body.instance_id, null, 'instance_id is present as null');
      assert.equal(res.body.backend, 'lmdb');
      assert.equal(res.body.generation, 0);
      for (const section of ['rest', 'agent', 'tools', 'shell', 'retry', 'skills', 'limits', 'providers']) {
        assert.equal(typeof res.body.config[section], 'object', `config.${section}`);
      }
      assert.equal(res.body.config.tools.builtins_enabled, false);
    });

    it('GET /config shows resolved_paths (existing realm files) with exposePaths', async (t) => {
      const app = await startApp(t, [], { ...opts, exposePaths: true, instance: 'inst-1' });
      const { body } = await call(app.url, 'GET', '/config');
      assert.equal(body.instance_id, 'inst-1');
      const paths = body.resolved_paths;
      assert.equal(paths.root, join(app.stateRoot, 'test-realm'));
      assert.equal(paths.manifest_path, join(paths.root, 'realm_manifest.json'));
      assert.equal(paths.config_path, join(paths.root, 'config.toml'));
      for (const file of [paths.manifest_path, paths.config_path, paths.config_state_path]) assert.ok(statSync(file).isFile(), file);
    });

    it('GET /realms lists the active realm first, then configured [realm.<id>] sections', async (t) => {
      const app = await startApp(t, [], opts);
      const before = await call(app.url, 'GET', '/realms');
      assert.equal(before.status, 200);
      assert.deepEqual(before.body.realms, [
        { realm_id: 'test-realm', backend: 'lmdb', backend_count: 0, auth_profile_count: 0, binding_count: 0 },
      ]);
      const section = { default_binding: 'main', binding: { main: { provider: 'anthropic' } }, auth: { a1: {}, a2: {} } };
      const patched = await call(app.url, 'PATCH', '/config', { realm: { team: section } });
      assert.equal(patched.status, 200, JSON.stringify(patched.body));
      const after = await call(app.url, 'GET', '/realms');
      assert.deepEqual(
        after.body.realms.map((r: { realm_id: string }) => r.realm_id),
        ['test-realm', 'team'],
      );
      assert.deepEqual(after.body.realms[1], {
        realm_id: 'team',
        default_binding: 'main',
        backend_count: 0,
        auth_profile_count: 2,
        binding_count: 1,
      });
    });

    it('GET /realms/{id} answers the active realm and 404 {error, code} for an unknown id', async (t) => {
      const app = await startApp(t, [], opts);
      const active = await call(app.url, 'GET', '/realms/test-realm');
      assert.equal(active.status, 200);
      assert.deepEqual(active.body, { realm_id: 'test-realm', backend: 'lmdb', backends: {}, auth_profiles: {}, bindings: {} });
      const unknown = await call(app.url, 'GET', '/realms/nowhere');
      assert.equal(unknown.status, 404);
      assert.deepEqual(unknown.body, { error: 'Unknown realm: nowhere', code: 'NOT_FOUND' }, 'the error envelope, with its code');
    });

    it('GET /capabilities lists every id in the fixed order with exact status spellings', async (t) => {
      const app = await startApp(t, [], opts);
      const { status, body } = await call(app.url, 'GET', '/capabilities');
      assert.equal(status, 200);
      assert.deepEqual(Object.keys(body.contract_version).sort(), ['major', 'minor', 'patch']);
      assert.deepEqual(
        body.capabilities.map((c: { id: string }) => c.id),
        CAPABILITY_ORDER,
      );
      for (const c of body.capabilities) {
        assert.deepEqual(Object.keys(c).sort(), ['description', 'id', 'status']);
        assert.ok(c.description.length > 0);
        assertStatusSpelling(c.id, c.status);
      }
      assert.equal(statusOf(body, 'sessions'), 'Available');
      assert.equal(statusOf(body, 'streaming'), 'Available');
      assert.deepEqual(statusOf(body, 'builtins'), { DisabledByPolicy: { description: 'tools.builtins_enabled = false' } });
      assert.deepEqual(statusOf(body, 'shell'), { DisabledByPolicy: { description: 'tools.shell_enabled = false' } });
    });

    it('enabling tools.builtins_enabled and tools.shell_enabled via PATCH /config makes them Available', async (t) => {
      const app = await startApp(t, [], opts);
      const patched = await call(app.url, 'PATCH', '/config', { tools: { builtins_enabled: true } });
      assert.equal(patched.status, 200);
      let caps = (await call(app.url, 'GET', '/capabilities')).body;
      assert.equal(statusOf(caps, 'builtins'), 'Available');
      assert.deepEqual(statusOf(caps, 'shell'), { DisabledByPolicy: { description: 'tools.shell_enabled = false' } });
      await call(app.url, 'PATCH', '/config', { tools: { shell_enabled: true, builtins_enabled: false } });
      caps = (await call(app.url, 'GET', '/capabilities')).body;
      assert.equal(statusOf(caps, 'shell'), 'Available');
      assert.deepEqual(statusOf(caps, 'builtins'), { DisabledByPolicy: { description: 'tools.builtins_enabled = false' } });
    });

    it('GET /runtime/capabilities reports every host feature flag as a boolean', async (t) => {
      const app = await startApp(t, [], opts);
      const { status, body } = await call(app.url, 'GET', '/runtime/capabilities');
      assert.equal(status, 200);
      assert.deepEqual(Object.keys(body).sort(), ['contract_version', 'features']);
      assert.deepEqual(Object.keys(body.features).sort(), [...FEATURE_FLAGS].sort());
      for (const flag of FEATURE_FLAGS) assert.equal(typeof body.features[flag], 'boolean', flag);
      assert.equal(body.features.runtime_backed_sessions, true);
      assert.equal(body.features.session_events, true);
      assert.equal(body.features.session_streams, true);
      assert.equal(body.features.mobs, true);
      assert.equal(body.features.multi_host_mobs, false);
    });

    it('GET /runtime/health measures four session dimensions, reports unmeasured:jobs, and is ok when fresh', async (t) => {
      const app = await startApp(t, [{ text: 'hi' }], opts);
      const fresh = await call(app.url, 'GET', '/runtime/health');
      assert.equal(fresh.status, 200);
      assert.equal(fresh.body.status, 'ok');
      assert.deepEqual(Object.keys(fresh.body.checks), HEALTH_KEYS, 'every key present, sorted');
      assert.deepEqual(fresh.body.checks, {
        session_durability: 'ok',
        session_liveness: 'ok',
        session_run_start: 'ok',
        session_runtime_loop: 'ok',
        'unmeasured:jobs': 'degraded',
      });
      assert.equal((await call(app.url, 'POST', '/sessions', { prompt: 'hello' })).status, 200);
      const afterTurn = await call(app.url, 'GET', '/runtime/health');
      assert.equal(afterTurn.body.status, 'ok', 'an idle committed session does not degrade health');
    });

    it('GET /runtime/host_info carries the /runtime/health payload and the process host id without an instance', async (t) => {
      const app = await startApp(t, [], opts);
      const [info, health, caps] = await Promise.all(
        ['/runtime/host_info', '/runtime/health', '/runtime/capabilities'].map((p) => call(app.url, 'GET', p)),
      );
      assert.equal(info.status, 200);
      assert.deepEqual(info.body.health, health.body);
      assert.deepEqual(info.body.capabilities, caps.body);
      assert.equal(info.body.host_id, `process:${process.pid}`);
      assert.equal(info.body.host_id_scope, 'process');
      assert.equal(info.body.process_name, 'warren');
      assert.equal(info.body.process_version, PACKAGE_VERSION);
      assert.equal(info.body.realm.realm_id, 'test-realm');
      assert.equal(info.body.realm.backend, 'lmdb');
      assert.equal('instance_id' in info.body.realm, false, 'optional members are omitted, not null');
      assert.equal(info.body.endpoints.rest_base_url, app.url);
      assert.deepEqual([...info.body.endpoints.rest_paths].sort(), [...new Set(CATALOG.map((r) => r.path))].sort());
    });

    it('GET /runtime/host_info uses the realm-instance host id when an instance is given', async (t) => {
      const app = await startApp(t, [], { ...opts, instance: 'inst-7' });
      const { body } = await call(app.url, 'GET', '/runtime/host_info');
      assert.equal(body.host_id, 'realm-instance:test-realm:inst-7');
      assert.equal(body.host_id_scope, 'realm_instance');
      assert.equal(body.realm.instance_id, 'inst-7');
      assert.deepEqual(body.health, (await call(app.url, 'GET', '/runtime/health')).body);
    });

    it('GET /models/catalog lists providers with default models, context windows and profiles', async (t) => {
      const app = await startApp(t, [], opts);
      const { status, body } = await call(app.url, 'GET', '/models/catalog');
      assert.equal(status, 200);
      assert.deepEqual(body, modelCatalog());
      assert.equal(typeof body.contract_version, 'string', 'the catalog contract_version is a string (SPEC.md "Versioning")');
      assert.deepEqual(
        body.providers.map((p: { provider: string }) => p.provider),
        ['anthropic', 'gemini', 'openai'],
      );
      for (const p of body.providers) {
        assert.ok(
          p.models.some((m: { id: string }) => m.id === p.default_model_id),
          `${p.provider} default ${p.default_model_id} is listed`,
        );
        for (const m of p.models) {
          assert.ok(Number.isInteger(m.context_window) && m.context_window > 0, `${m.id} context_window`);
          assert.ok(Number.isInteger(m.max_output_tokens) && m.max_output_tokens > 0, `${m.id} max_output_tokens`);
          assert.ok(['recommended', 'supported'].includes(m.tier), `${m.id} tier`);
          assert.equal(typeof m.display_name, 'string');
          assert.equal(typeof m.profile.model_family, 'string');
          for (const flag of ['supports_temperature', 'supports_thinking', 'supports_reasoning'] as const)
            assert.equal(typeof m.profile[flag], 'boolean', `${m.id} ${flag}`);
          assert.equal(typeof m.profile.params_schema, 'object');
        }
      }
    });

    it('GET /openapi.json is an OpenAPI 3.1 document with every catalog route and resolvable $refs', async (t) => {
      const app = await startApp(t, [], opts);
      const { status, body } = await call(app.url, 'GET', '/openapi.json');
      assert.equal(status, 200);
      assert.equal(body.openapi, '3.1.0');
      assert.equal(body.info.title, 'Warren');
      assert.equal(body.info.version, PACKAGE_VERSION);
      const operationIds = new Set<string>();
      for (const route of CATALOG) {
        const op = body.paths[route.path]?.[route.method.toLowerCase()];
        assert.ok(op, `${route.method} ${route.path} missing from /openapi.json`);
        assert.equal(op.operationId, route.id);
        assert.ok(op.responses[String(route.response.status)], `${route.id} success response`);
        operationIds.add(op.operationId);
      }
      assert.equal(operationIds.size, CATALOG.length, 'operationIds are unique');
      for (const ref of refsOf(body)) {
        assert.match(ref, /^#\/components\/schemas\//);
        assert.ok(body.components.schemas[ref.slice('#/components/schemas/'.length)], `unresolved ${ref}`);
      }
    });
  });
}

describe('GET /skills', () => {
  it('answers 404 only while [skills] enabled = false (test/integration/skills.test.ts covers the listing)', async (t) => {
    const app = await startApp(t);
    assert.equal((await call(app.url, 'GET', '/skills')).status, 200);
    await call(app.url, 'PATCH', '/config', { skills: { enabled: false } });
    const r = await call(app.url, 'GET', '/skills');
    assert.equal(r.status, 404);
    assert.deepEqual(r.body, { error: 'skills not enabled', code: 'NOT_FOUND' });
  });
});
