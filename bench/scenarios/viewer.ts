// bench/scenarios/viewer.ts: what the actor viewer costs the hot path. The same create+turn closed loop
// with no viewer, with one inspection stream open (GET /inspect/events, every transition of every
// actor), and with none again (bracketing drift), on one server.
import { openFanout } from '../sse-clients.ts';
import type { BenchContext, Row, Scenario, ScenarioResult } from '../scenario.ts';
import { withServer } from '../scenario.ts';
import { WarrenClient } from '../load.ts';
import { round } from '../stats.ts';
import { measureCreate, TURN_COLUMNS, turnRow, warmUp } from './turns.ts';

export const viewerScenario: Scenario = {
  id: 'viewer',
  title: 'Turn CPU with and without one actor viewer open',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const c = Math.max(1, ...ctx.concurrencies.filter((x) => x <= 10));
    const rows: Row[] = [];
    const notes: string[] = [];
    await withServer(ctx, {}, async (server) => {
      const client = new WarrenClient(server.url, c);
      await warmUp(ctx, client, c);
      const before = await measureCreate(ctx, server, client, c);
      rows.push(turnRow({ viewer: 'none', c }, before));
      const url = new URL(server.url);
      const viewer = await openFanout(url.hostname, Number(url.port), '/inspect/events', 1, 1_000_000);
      let open;
      try {
        open = await measureCreate(ctx, server, client, c);
        rows.push(turnRow({ viewer: 'one open', c }, open));
        notes.push(
          `the viewer received ${viewer.events()} frames (${round(viewer.events() / Math.max(1, open.ops))} transitions per turn), ${viewer.truncated()} truncation markers`,
        );
      } finally {
        viewer.close();
      }
      const after = await measureCreate(ctx, server, client, c);
      rows.push(turnRow({ viewer: 'none (after)', c }, after));
      const base = (before.cpuMsPerOp + after.cpuMsPerOp) / 2;
      notes.push(
        `CPU per turn with one viewer open: ${round(open.cpuMsPerOp)} ms vs ${round(base)} ms without (${round((100 * open.cpuMsPerOp) / base)}%).`,
      );
      ctx.log(`  viewer: ${round(open.cpuMsPerOp)} ms/turn open vs ${round(base)} ms/turn closed`);
    });
    notes.push('Inspection is off while no viewer is subscribed: no XState inspection observer is attached to any actor.');
    return { id: 'viewer', title: this.title, columns: ['viewer', 'c', ...TURN_COLUMNS], rows, notes, targets: [] };
  },
};
