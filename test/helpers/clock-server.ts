// test/helpers/clock-server.ts: a real Warren server process (createApp, as main.ts runs it) whose
// schedules run on a ManualClock driven over the IPC channel, for kill -9 tests of durable schedules.
// Started by startServerProcess({ entry: CLOCK_SERVER, ipc: true, env: { WARREN_TEST_CLOCK_MS } }).
// Messages: { advance_to: ms, settle: boolean } → { advanced: ms } (after settling when asked);
// { advance_to, until_hang: true } → { hung: n } once WARREN_TEST_HANG_AFTER provider calls were answered
// and call WARREN_TEST_NOTIFY_AT arrived (every call past the first number hangs for good), so a kill
// lands mid-firing.
import { ManualClock } from '../../actors/clock.ts';
import { createApp } from '../../app.ts';
import { parseServeArgs } from '../../config/flags.ts';
import { createLogger } from '../../config/logger.ts';
import { createScriptedProvider, echoReply, type ScriptedReply } from '../../providers/scripted.ts';
import type { ProviderRequest } from '../../providers/provider.ts';
import { driveClock } from './schedule-clock.ts';

const options = parseServeArgs(process.argv.slice(2).filter((a) => a !== 'serve'));
const logger = createLogger({ level: options.logLevel });
const clock = new ManualClock(Number(process.env.WARREN_TEST_CLOCK_MS));
const hangAfter = Number(process.env.WARREN_TEST_HANG_AFTER ?? Infinity);
/** The hung call whose arrival is reported (default the first). */
const notifyAt = Number(process.env.WARREN_TEST_NOTIFY_AT ?? hangAfter + 1);
let calls = 0;
let onHang: (() => void) | undefined;
const provider = createScriptedProvider((req: ProviderRequest): ScriptedReply => {
  calls++;
  if (calls <= hangAfter) return echoReply(req);
  if (calls >= notifyAt) onHang?.();
  return { text: 'never', waitFor: new Promise<void>(() => {}) };
});
const app = await createApp({ ...options, logger, clock, providerOverrides: { scripted: provider } });

process.on('message', (raw) => {
  const msg = raw as { advance_to: number; settle?: boolean; until_hang?: boolean };
  if (msg.until_hang) {
    onHang = () => {
      onHang = undefined;
      process.send?.({ hung: calls });
    };
    clock.advanceTo(msg.advance_to);
    return;
  }
  const run = msg.settle
    ? driveClock(clock, () => app.schedulesSettled(), msg.advance_to)
    : Promise.resolve(clock.advanceTo(msg.advance_to));
  run.then(() => process.send?.({ advanced: clock.now() })).catch((err: unknown) => process.send?.({ error: String(err) }));
});
