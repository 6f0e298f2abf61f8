// test/architecture/skip-policy.test.ts: the CI skip policy of test/helpers/absent.ts and the bounds of the
// test helpers' waits (test/helpers/wait.ts, the gates' deferreds, the fake clock's drive loop): a suite whose
// part could not start fails in CI unless declared absent, and a wait that is never satisfied fails fast.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../actors/clock.ts';
import { maySkip, missingPart } from '../helpers/absent.ts';
import { deferred } from '../helpers/gates.ts';
import { driveClock } from '../helpers/schedule-clock.ts';
import { poll, within } from '../helpers/wait.ts';

describe('CI skip policy', () => {
  it('skips locally, fails in CI unless WARREN_TEST_ABSENT names the part', () => {
    assert.equal(maySkip('postgres', {}), true);
    assert.equal(maySkip('postgres', { CI: 'false' }), true);
    assert.equal(maySkip('postgres', { CI: 'true' }), false);
    assert.equal(maySkip('chromium', { CI: 'true', WARREN_TEST_ABSENT: 'postgres' }), false);
    assert.equal(maySkip('chromium', { CI: 'true', WARREN_TEST_ABSENT: 'postgres, Chromium' }), true);
    assert.equal(maySkip('postgres', { CI: 'true', WARREN_TEST_POSTGRES: 'off' }), true);
    assert.equal(maySkip('uws', { CI: '1', WARREN_TEST_POSTGRES: 'off' }), false);
  });

  it("the stand-in test's body fails naming the part, the reason and the variable", () => {
    const [, body] = missingPart('postgres', 'initdb EACCES');
    assert.throws(body, /postgres could not start in CI: initdb EACCES \(set WARREN_TEST_ABSENT=postgres/);
  });
});

describe('bounded waits', () => {
  it('poll fails after its deadline naming what it waited for and the last detail', async () => {
    const started = Date.now();
    await assert.rejects(
      poll('the moon', () => false, { timeoutMs: 50, detail: () => 'still new' }),
      /timed out after 50 ms waiting for the moon: still new/,
    );
    assert.ok(Date.now() - started < 5_000);
    assert.equal(await poll('a value', () => 7), 7);
  });

  it('within and a named deferred reject after their deadlines; an anonymous deferred stays open', async () => {
    await assert.rejects(within('a gate', new Promise(() => {}), 30), /waiting for a gate/);
    // The deferred's timer does not keep the process alive; a test awaiting it has its own I/O doing that.
    const alive = setInterval(() => {}, 1_000);
    await assert.rejects(deferred('call 2 to reach its gate', 30).promise, /timed out after 30 ms waiting for call 2 to reach its gate/);
    clearInterval(alive);
    const d = deferred<number>('a resolved gate', 30);
    d.resolve(3);
    assert.equal(await d.promise, 3);
  });

  it('driveClock stops a timer that keeps re-arming at the instant it fired', async () => {
    const clock = new ManualClock(1_000);
    // Re-armed by the firing's follow-up work (as an actor would), so the clock's own advanceTo returns.
    const rearm = (): void => void Promise.resolve().then(() => clock.setTimeout(rearm, 0));
    clock.setTimeout(rearm, 10);
    await assert.rejects(
      driveClock(clock, () => new Promise((r) => setImmediate(r)), 5_000, { maxSameInstant: 50 }),
      /runaway timers .* at 1010/,
    );
  });
});
