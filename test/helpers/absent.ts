// test/helpers/absent.ts: the skip policy of suites whose part may not start on this machine (PostgreSQL for the
// cluster suites, tmpfs for full-disk, uWS, Chromium). Locally such a suite skips with its reason. In CI
// (`CI=true`) a skip would hide a suite that never ran, so it fails instead, unless WARREN_TEST_ABSENT names the
// part as absent on purpose (comma-separated: `WARREN_TEST_ABSENT=chromium,postgres`).

import { uwsUnavailableReason } from '../../http/create-server.ts';

export type Part = 'postgres' | 'full-disk' | 'uws' | 'chromium';

/** The parts WARREN_TEST_ABSENT declares absent on purpose. */
export function declaredAbsent(env: NodeJS.ProcessEnv = process.env): Set<string> {
  return new Set(
    (env.WARREN_TEST_ABSENT ?? '')
      .split(',')
      .map((p) => p.trim().toLowerCase())
      .filter(Boolean),
  );
}

/** Whether a suite whose `part` could not start may skip (not in CI, or declared absent there). */
export function maySkip(part: Part, env: NodeJS.ProcessEnv = process.env): boolean {
  const ci = env.CI !== undefined && env.CI !== '' && env.CI !== 'false' && env.CI !== '0';
  if (!ci || declaredAbsent(env).has(part)) return true;
  // WARREN_TEST_POSTGRES=off (test/helpers/postgres.ts) also turns the postgres suites off on purpose.
  return part === 'postgres' && env.WARREN_TEST_POSTGRES === 'off';
}

/**
 * Test options and body for the one test standing in for a suite whose `part` could not start: a skip with the
 * reason where skipping is allowed, else a failure naming the part, the reason and the variable that would allow it.
 * Use: `it('needs a PostgreSQL server', ...missingPart('postgres', reason))`.
 */
export function missingPart(part: Part, reason: string): [{ skip: string | false }, () => void] {
  const skip = maySkip(part) ? `${part} tests skipped: ${reason}` : false;
  return [
    { skip },
    () => {
      throw new Error(`${part} could not start in CI: ${reason} (set WARREN_TEST_ABSENT=${part} if it is absent on purpose)`);
    },
  ];
}

/** For a per-test skip option: the reason to skip, or false in CI when the part is not declared absent (the test then runs and fails). */
export function skipUnlessRequired(part: Part, reason: string | false | undefined): string | false {
  if (!reason) return false;
  return maySkip(part) ? reason : false;
}

/** Why the uWS suites skip here (the native binding does not load), or false: also false in CI unless declared absent. */
export function uwsSkip(): string | false {
  return skipUnlessRequired('uws', uwsUnavailableReason());
}
