// bench/scenarios/ledger.ts: stored bytes per session on lmdb after 1 and 100 turns, for 20-token and
// 2,000-token replies, with the default ledger (a committed turn's text deltas dropped) and with
// `[ledger] keep_text_deltas = true` (every delta kept, as Warren stored it before). Disk use is the store
// directory's allocated blocks, measured after the last commit and divided by the sessions, minus the
// empty realm's. Figures only; nothing here is asserted.
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { WarrenClient } from '../load.ts';
import { check, withServer, type BenchContext, type Row, type Scenario, type ScenarioResult } from '../scenario.ts';
import { round } from '../stats.ts';

async function dirBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += await dirBytes(path);
    else total += (await stat(path)).blocks * 512;
  }
  return total;
}

async function patchConfig(url: string, patch: unknown): Promise<void> {
  const res = await fetch(`${url}/config`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(patch),
  });
  if (res.status !== 200) throw new Error(`PATCH /config → ${res.status}: ${await res.text()}`);
}

export const ledgerScenario: Scenario = {
  id: 'ledger',
  title: 'Stored bytes per session (lmdb): 1 and 100 turns, 20- and 2,000-token replies, deltas dropped vs kept',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const sessions = ctx.quick ? 4 : 20;
    const turnCounts = ctx.quick ? [1, 5] : [1, 100];
    const rows: Row[] = [];
    const targets = [];
    const saved = { ...ctx.fake.knobs };
    try {
      for (const tokens of [20, 2000]) {
        for (const turns of turnCounts) {
          for (const keep of [false, true]) {
            ctx.fake.configure({ tokens, tokenDelayMs: 0 });
            const bytes = await withServer(ctx, { backend: 'lmdb' }, async (server) => {
              if (keep) await patchConfig(server.url, { ledger: { keep_text_deltas: true } });
              const store = join(server.realmDir, 'store');
              const empty = await dirBytes(store);
              const client = new WarrenClient(server.url, 4);
              try {
                await Promise.all(
                  Array.from({ length: sessions }, async (_, s) => {
                    const id = await client.create(`session ${s}`);
                    for (let i = 1; i < turns; i++) await client.continue(id, `turn ${i}`);
                  }),
                );
              } finally {
                await client.close();
              }
              return ((await dirBytes(store)) - empty) / sessions;
            });
            const mode = keep ? 'kept (keep_text_deltas)' : 'dropped (default)';
            ctx.log(`  ${tokens} tokens, ${turns} turn(s), deltas ${mode}: ${round(bytes / 1024)} KiB/session`);
            rows.push({ tokens, turns, deltas: mode, kib_per_session: round(bytes / 1024), bytes_per_turn: Math.round(bytes / turns) });
            if (tokens === 20 && turns === 1 && !keep)
              targets.push(check('one 20-token turn per stored session', round(bytes / 1024), 10, 'KiB', 'ledger'));
          }
        }
      }
    } finally {
      ctx.fake.configure(saved);
    }
    return {
      id: 'ledger',
      title: this.title,
      columns: ['tokens', 'turns', 'deltas', 'kib_per_session', 'bytes_per_turn'],
      rows,
      notes: [
        `${sessions} sessions per row, each created then continued to the turn count; bytes are the lmdb store's allocated blocks after the last commit, minus the empty realm's, per session (page granularity: small rows read high).`,
        '"kept" is `[ledger] keep_text_deltas = true`, i.e. every text delta stays in the ledger, as before the ledger was bounded.',
      ],
      targets,
    };
  },
};
