// test/http/module-unit.test.ts: composeModules joins module units into one route table and capability
// registry: its routes and handlers are joined, an undeclared capability refuses through the capability
// registry, and wiring mistakes (two owners of a handler, a capability or a
// config key, an actor kind never registered) fail at startup.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { Type } from 'typebox';
import { Supervisor } from '../../actors/supervisor.ts';
import { defaultConfig } from '../../config/toml.ts';
import type { HandlerContext } from '../../http/handler.ts';
import { composeModules, type ModuleFactory } from '../../http/module-unit.ts';
import { createMemoryStore } from '../../storage/memory-store.ts';

const widgetsModule: ModuleFactory = () => ({
  name: 'widgets',
  routes: [
    {
      id: 'widgets.list',
      method: 'GET',
      path: '/widgets',
      summary: 'List widgets',
      response: { status: 200, schema: Type.Object({}) },
      errors: [],
    },
  ],
  handlers: { 'widgets.list': () => ({ status: 200, body: {} }) },
  capabilities: [{ id: 'widgets' }, { id: 'schedule', gate: null }],
  configKeys: ['widgets'],
});

function compose(modules: ModuleFactory[]) {
  const supervisor = new Supervisor({
    store: createMemoryStore(),
    log: pino({ level: 'silent' }),
    realmId: 'r',
    contextRoot: '/tmp',
    providers: {
      resolve: () => {
        throw new Error('no providers in this test');
      },
    },
    config: () => defaultConfig(),
    now: Date.now,
  });
  const composed = composeModules(modules, {
    supervisor,
    log: pino({ level: 'silent' }),
    sessionPolicy: { idleEvictMs: 1_000, shedAfterMs: 1_000, maxResident: 10, overdueRunMs: 1_000 },
    realm: { realmId: 'r', backend: 'memory', contextRoot: '/tmp' },
    config: { envelope: () => ({}), replace: async () => ({}), patch: async () => ({}), current: () => defaultConfig() },
    modelCatalog: () => ({}),
    openapi: () => ({}),
    baseUrl: () => '',
  });
  return { supervisor, ...composed };
}

describe('module units', () => {
  it("joins a module's routes and handlers; an undeclared capability refuses via the capability registry", async () => {
    const { supervisor, routes, handlers } = compose([widgetsModule]);
    assert.deepEqual(
      routes.map((r) => r.id),
      ['widgets.list'],
    );
    assert.equal(routes[0].summary, 'List widgets');
    assert.deepEqual(await handlers['widgets.list']({} as HandlerContext), { status: 200, body: {} });
    assert.equal(supervisor.capabilities.isBuilt('widgets'), true);
    assert.equal(supervisor.capabilities.status('schedule'), 'Available', 'a null gate overrides the standard one');
    assert.equal(supervisor.capabilities.runtime().features.schedules, true);
    assert.throws(() => supervisor.capabilities.require('hooks', 'hook overrides'), /hook overrides is not built/);
    await supervisor.close();
  });

  it('fails at startup on two owners of a capability, a handler or a config key, or an unregistered kind', () => {
    const clash =
      (patch: object): ModuleFactory =>
      (ctx) => ({ ...widgetsModule(ctx), name: 'other', routes: [], handlers: {}, capabilities: [], configKeys: [], ...patch });
    assert.throws(
      () => compose([widgetsModule, clash({ capabilities: [{ id: 'widgets' }] })]),
      /capability widgets declared by both widgets and other/,
    );
    assert.throws(
      () => compose([widgetsModule, clash({ handlers: { 'widgets.list': () => ({ status: 200, body: {} }) } })]),
      /registered by two modules/,
    );
    assert.throws(() => compose([widgetsModule, clash({ configKeys: ['widgets'] })]), /config key widgets claimed by both/);
    assert.throws(() => compose([clash({ actorKinds: ['ghost'] })]), /did not register/);
    assert.throws(() => compose([widgetsModule, widgetsModule]), /module registered twice/);
  });
});
