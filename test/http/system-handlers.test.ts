// test/http/system-handlers.test.ts: every system route through the real router and node:http server,
// with a hand-built SystemDeps; plus the not-yet-built catalog answering 501.
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { pino } from 'pino';
import { CapabilityRegistry } from '../../actors/capability-registry.ts';
import { COMMS_ROUTES } from '../../contracts/routes-comms.ts';
import { CAPABILITY_IDS, RUNTIME_FEATURE_FLAGS, SYSTEM_ROUTES, WARREN_VERSION } from '../../contracts/routes-system.ts';
import { systemHandlers, type SystemDeps } from '../../http/handlers/system.ts';
import { buildOpenApi } from '../../http/openapi.ts';
import { createRouter } from '../../http/router.ts';
import { createNodeServer } from '../../http/server-node.ts';

const routes = [...SYSTEM_ROUTES, ...COMMS_ROUTES];
const openapiDoc = buildOpenApi(routes, { title: 'Warren', version: WARREN_VERSION });
const calls: Array<[string, unknown]> = [];
let base = '';

/** A capability registry in which `ids` are built, gated by the test's current config. */
function registryOf(ids: string[]): CapabilityRegistry {
  const registry = new CapabilityRegistry(() => deps.config.current());
  for (const id of ids) registry.declare({ id }, 'test');
  return registry;
}

function freshDeps(): SystemDeps {
  return {
    config: {
      envelope: () => ({ config: { tools: {} }, generation: 3, realm_id: 'r1', instance_id: null, backend: 'lmdb' }),
      replace: async (body) => (calls.push(['replace', body]), { generation: 4 }),
      patch: async (body) => (calls.push(['patch', body]), { generation: 5 }),
      current: () => ({
        tools: { builtins_enabled: false, shell_enabled: true, schedule_enabled: true, workgraph_enabled: false },
        skills: { enabled: false },
        realm: {
          team: { backend: { b1: {} }, auth: { a1: {}, a2: {} }, binding: { x: {} }, default_binding: 'x' },
          r1: { binding: { main: {} } },
        },
      }),
    },
    realm: { realmId: 'r1', backend: 'lmdb', contextRoot: '/ctx' },
    catalog: () => ({ contract_version: '0.1.0', providers: [] }),
    sessionHealth: () => ({ session_liveness: 0, session_durability: 0, session_run_start: 0, session_runtime_loop: 0 }),
    baseUrl: () => base,
    routes: () => routes,
    openapi: () => openapiDoc,
    capabilities: registryOf([
      'sessions',
      'streaming',
      'structured_output',
      'builtins',
      'shell',
      'schedule',
      'work_graph',
      'session_store',
      'skills',
      'event_replay',
    ]),
  };
}

// The handlers read `deps` fields at request time, so tests swap fields on this one object.
const deps = freshDeps();
const logger = pino({ level: 'silent' });
const server = createNodeServer({
  handler: createRouter({ routes, handlers: systemHandlers(deps), logger, maxBodyBytes: 1 << 16 }),
  maxBodyBytes: 1 << 16,
  logger,
});

async function get(path: string): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(base + path);
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

async function send(method: string, path: string, body: string): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(base + path, { method, body, headers: { 'content-type': 'application/json' } });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

describe('system handlers', () => {
  before(async () => {
    const { port } = await server.listen('127.0.0.1', 0);
    base = `http://127.0.0.1:${port}`;
  });
  after(() => server.close());
  beforeEach(() => Object.assign(deps, freshDeps()));

  it('GET /health answers the plain text ok', async () => {
    const res = await fetch(`${base}/health`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    assert.equal(await res.text(), 'ok');
  });

  it('GET /openapi.json serves the document', async () => {
    const r = await get('/openapi.json');
    assert.equal(r.status, 200);
    assert.equal(r.json.openapi, '3.1.0');
  });

  it('delegates GET, PUT and PATCH /config and rejects a non-object body', async () => {
    calls.length = 0;
    assert.equal((await get('/config')).json.generation, 3);
    const put = await send('PUT', '/config', JSON.stringify({ config: { agent: {} }, expected_generation: 3 }));
    assert.deepEqual(put, { status: 200, json: { generation: 4 } });
    const patch = await send('PATCH', '/config', JSON.stringify({ tools: { shell_enabled: true } }));
    assert.deepEqual(patch, { status: 200, json: { generation: 5 } });
    assert.deepEqual(calls, [
      ['replace', { config: { agent: {} }, expected_generation: 3 }],
      ['patch', { tools: { shell_enabled: true } }],
    ]);
    const bad = await send('PATCH', '/config', '[1,2]');
    assert.equal(bad.status, 400);
    assert.equal(bad.json.code, 'BAD_REQUEST');
  });

  it('GET /capabilities lists every capability in the fixed order with exact status spellings', async () => {
    const r = await get('/capabilities');
    assert.deepEqual(r.json.contract_version, { major: 0, minor: 1, patch: 0 });
    const rows = r.json.capabilities as Array<{ id: string; description: string; status: unknown }>;
    assert.deepEqual(
      rows.map((c) => c.id),
      [
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
      ],
    );
    assert.deepEqual(
      rows.map((c) => c.id),
      [...CAPABILITY_IDS],
    );
    const status = Object.fromEntries(rows.map((c) => [c.id, c.status]));
    assert.equal(status.sessions, 'Available');
    assert.equal(status.shell, 'Available');
    assert.equal(status.schedule, 'Available');
    assert.deepEqual(status.hooks, { NotCompiled: { feature: 'hooks' } });
    assert.deepEqual(status.comms, { NotCompiled: { feature: 'comms' } });
    assert.deepEqual(status.builtins, { DisabledByPolicy: { description: 'tools.builtins_enabled = false' } });
    assert.deepEqual(status.work_graph, { DisabledByPolicy: { description: 'config.tools.workgraph_enabled is false' } });
    assert.deepEqual(status.skills, { DisabledByPolicy: { description: 'config.skills.enabled is false' } });
    for (const row of rows) assert.ok(row.description.length > 0);
  });

  it('GET /capabilities prefers NotCompiled over a policy gate', async () => {
    deps.capabilities = registryOf(['sessions']);
    const rows = (await get('/capabilities')).json.capabilities as Array<{ id: string; status: unknown }>;
    assert.deepEqual(rows.find((c) => c.id === 'builtins')?.status, { NotCompiled: { feature: 'builtins' } });
  });

  it('GET /runtime/capabilities reports the 16 feature flags truthfully for this build', async () => {
    const r = await get('/runtime/capabilities');
    const features = r.json.features as Record<string, boolean>;
    assert.deepEqual(Object.keys(features).sort(), [...RUNTIME_FEATURE_FLAGS].sort());
    assert.equal(Object.keys(features).length, 16);
    assert.equal(features.runtime_backed_sessions, true);
    assert.equal(features.session_streams, true);
    assert.equal(features.event_replay, true);
    assert.equal(features.mobs, false);
    assert.equal(features.comms, false);
    assert.equal(features.skills, false, 'built but disabled by config');
    assert.equal(features.durable_jobs, false);
  });

  it('GET /runtime/health is ok when every measured dimension reads 0, with sorted keys', async () => {
    const r = await get('/runtime/health');
    assert.equal(r.json.status, 'ok');
    assert.deepEqual(r.json.checks, {
      session_durability: 'ok',
      session_liveness: 'ok',
      session_run_start: 'ok',
      session_runtime_loop: 'ok',
      'unmeasured:jobs': 'degraded',
    });
    const keys = Object.keys(r.json.checks as object);
    assert.deepEqual(keys, [...keys].sort());
  });

  it('GET /runtime/health degrades on a bad session count', async () => {
    deps.sessionHealth = () => ({ session_liveness: 2, session_durability: 0, session_run_start: 0, session_runtime_loop: 0 });
    const r = await get('/runtime/health');
    assert.equal(r.json.status, 'degraded');
    assert.equal((r.json.checks as Record<string, string>).session_liveness, 'degraded');
  });

  it('GET /runtime/health reports a missing dimension as unreadable and degraded', async () => {
    deps.sessionHealth = () => ({ session_liveness: 0, session_durability: 0, session_run_start: 0 });
    const r = await get('/runtime/health');
    assert.equal(r.json.status, 'degraded');
    const checks = r.json.checks as Record<string, string>;
    assert.equal(checks['unreadable:session_runtime_loop'], 'degraded');
    assert.equal('session_runtime_loop' in checks, false);
    const keys = Object.keys(checks);
    assert.deepEqual(keys, [...keys].sort());
  });

  it('GET /runtime/health is degraded when nothing is measured, or the probe throws', async () => {
    deps.sessionHealth = () => ({});
    assert.equal((await get('/runtime/health')).json.status, 'degraded');
    deps.sessionHealth = () => {
      throw new Error('probe failed');
    };
    const r = await get('/runtime/health');
    assert.equal(r.status, 200);
    assert.equal(r.json.status, 'degraded');
    assert.equal(Object.keys(r.json.checks as object).filter((k) => k.startsWith('unreadable:')).length, 4);
  });

  it('GET /runtime/host_info uses a process host id without an instance', async () => {
    const r = await get('/runtime/host_info');
    assert.equal(r.json.host_id, `process:${process.pid}`);
    assert.equal(r.json.host_id_scope, 'process');
    assert.equal(r.json.process_name, 'warren');
    assert.equal(r.json.process_version, WARREN_VERSION);
    assert.deepEqual(r.json.realm, { realm_id: 'r1', backend: 'lmdb', context_root: '/ctx' });
    assert.deepEqual(r.json.health, (await get('/runtime/health')).json);
    assert.deepEqual(r.json.capabilities, (await get('/runtime/capabilities')).json);
    const endpoints = r.json.endpoints as { rest_base_url: string; rest_paths: string[] };
    assert.equal(endpoints.rest_base_url, base);
    assert.ok(endpoints.rest_paths.includes('/health'));
    assert.ok(endpoints.rest_paths.includes('/comms/send'));
    assert.equal(new Set(endpoints.rest_paths).size, endpoints.rest_paths.length);
  });

  it('GET /runtime/host_info uses a realm-instance host id with --instance', async () => {
    deps.realm = { realmId: 'r1', instanceId: 'i7', backend: 'lmdb', stateRoot: '/state', contextRoot: '/ctx' };
    const r = await get('/runtime/host_info');
    assert.equal(r.json.host_id, 'realm-instance:r1:i7');
    assert.equal(r.json.host_id_scope, 'realm_instance');
    assert.deepEqual(r.json.realm, { realm_id: 'r1', instance_id: 'i7', backend: 'lmdb', state_root: '/state', context_root: '/ctx' });
  });

  it('reports the package.json version', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    assert.equal(WARREN_VERSION, pkg.version);
  });

  it('GET /models/catalog serves the catalog', async () => {
    assert.deepEqual((await get('/models/catalog')).json, { contract_version: '0.1.0', providers: [] });
  });

  it('GET /realms lists the active realm first, then the configured realm sections', async () => {
    const r = await get('/realms');
    assert.deepEqual(r.json, {
      realms: [
        { realm_id: 'r1', backend: 'lmdb', backend_count: 0, auth_profile_count: 0, binding_count: 1 },
        { realm_id: 'team', default_binding: 'x', backend_count: 1, auth_profile_count: 2, binding_count: 1 },
      ],
    });
  });

  it('GET /realms/{id} answers a connection set, or 404 {error, code} for an unknown realm', async () => {
    const team = await get('/realms/team');
    assert.deepEqual(team, {
      status: 200,
      json: { realm_id: 'team', default_binding: 'x', backends: { b1: {} }, auth_profiles: { a1: {}, a2: {} }, bindings: { x: {} } },
    });
    assert.equal((await get('/realms/r1')).json.backend, 'lmdb');
    assert.deepEqual(await get('/realms/no%20such'), { status: 404, json: { error: 'Unknown realm: no such', code: 'NOT_FOUND' } });
  });
});
