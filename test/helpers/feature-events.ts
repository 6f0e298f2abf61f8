// test/helpers/feature-events.ts: checks event payloads of hooks and extraction against their schemas
// (contracts/turn-features.ts), so a test that reads events also pins their shapes.
import assert from 'node:assert/strict';
import { Compile } from 'typebox/compile';
import { TURN_FEATURE_EVENTS } from '../../contracts/turn-features.ts';

const checks = Object.fromEntries(Object.entries(TURN_FEATURE_EVENTS).map(([k, s]) => [k, Compile(s)]));

/** Asserts each payload of a hook or extraction kind matches its schema exactly. */
export function assertFeatureEventShapes(payloads: Array<{ type: string; [k: string]: unknown }>): void {
  for (const { type, ...rest } of payloads) {
    const check = checks[type];
    if (check) assert.ok(check.Check(rest), `${type} payload ${JSON.stringify(rest)}`);
  }
}
