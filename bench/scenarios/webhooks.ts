// bench/scenarios/webhooks.ts: what one webhook subscription costs a turn. The same create+turn closed
// loop with no subscription, with one (every run_completed written to the outbox in the turn's
// transaction, signed and POSTed to a loopback receiver in the bench process), and none again.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import type { BenchContext, Row, Scenario, ScenarioResult } from '../scenario.ts';
import { withServer } from '../scenario.ts';
import { WarrenClient } from '../load.ts';
import { round } from '../stats.ts';
import { measureCreate, TURN_COLUMNS, turnRow, warmUp } from './turns.ts';

export const webhooksScenario: Scenario = {
  id: 'webhooks',
  title: 'Turn CPU with one webhook subscription beside none',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const c = Math.max(1, ...ctx.concurrencies.filter((x) => x <= 10));
    const rows: Row[] = [];
    const notes: string[] = [];
    let received = 0;
    const receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        received++;
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
    const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    try {
      await withServer(ctx, {}, async (server) => {
        const client = new WarrenClient(server.url, c);
        await warmUp(ctx, client, c);
        const before = await measureCreate(ctx, server, client, c);
        rows.push(turnRow({ webhooks: 'none', c }, before));
        const sub = await fetch(`${server.url}/webhooks`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ url: hookUrl, secret: `whsec_${randomBytes(32).toString('base64')}` }),
        }).then((r) => r.json() as Promise<{ id: string }>);
        const one = await measureCreate(ctx, server, client, c);
        rows.push(turnRow({ webhooks: 'one subscription', c }, one));
        await fetch(`${server.url}/webhooks/${sub.id}`, { method: 'DELETE' });
        const after = await measureCreate(ctx, server, client, c);
        rows.push(turnRow({ webhooks: 'none (after)', c }, after));
        const base = (before.cpuMsPerOp + after.cpuMsPerOp) / 2;
        notes.push(
          `CPU per turn with one subscription: ${round(one.cpuMsPerOp)} ms vs ${round(base)} ms without (${round((100 * one.cpuMsPerOp) / base)}%); the receiver got ${received} deliveries for ${one.ops} turns in the window (deliveries trail the turns, so a few may land after it).`,
        );
        ctx.log(`  webhooks: ${round(one.cpuMsPerOp)} ms/turn with one subscription vs ${round(base)} ms/turn without`);
      });
    } finally {
      receiver.close();
    }
    return { id: 'webhooks', title: this.title, columns: ['webhooks', 'c', ...TURN_COLUMNS], rows, notes, targets: [] };
  },
};
