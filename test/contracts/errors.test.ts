import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ERROR_TABLE, ServiceError } from '../../contracts/errors.ts';

// SPEC.md "Errors": the HTTP table and the shared session error table.
const SPEC_HTTP: Record<string, number> = {
  BAD_REQUEST: 400,
  HOOK_DENIED: 403,
  ScopeDenied: 403,
  SESSION_NOT_FOUND: 404,
  SKILL_NOT_FOUND: 404,
  SESSION_BUSY: 409,
  SESSION_NOT_RUNNING: 409,
  SKILL_RESOLUTION_FAILED: 422,
  BUDGET_EXHAUSTED: 429,
  AGENT_ERROR: 500,
  INTERNAL_ERROR: 500,
  CAPABILITY_UNAVAILABLE: 501,
  PROVIDER_ERROR: 502,
};
const SPEC_RPC: Record<string, number> = {
  SESSION_NOT_FOUND: -32001,
  SESSION_BUSY: -32002,
  SESSION_PERSISTENCE_DISABLED: -32603,
  SESSION_COMPACTION_DISABLED: -32603,
  SESSION_NOT_RUNNING: -32603,
  SESSION_DURABLE_TAIL_HELD_FOR_RECOVERY: -32003,
  SESSION_DURABLE_TAIL_RECOVERY_REFUSED: -32003,
  SESSION_DURABLE_EVIDENCE_QUARANTINED: -32003,
  SESSION_STORE_ERROR: -32603,
  SESSION_UNSUPPORTED: -32603,
  SESSION_ERROR: -32603,
  ScopeDenied: -32025,
};

describe('error table', () => {
  it('matches every HTTP status of the spec Errors section', () => {
    for (const [code, status] of Object.entries(SPEC_HTTP)) {
      assert.ok(code in ERROR_TABLE, `missing ${code}`);
      assert.equal(ERROR_TABLE[code as keyof typeof ERROR_TABLE].status, status, code);
    }
  });
  it('matches every JSON-RPC code of the spec session error table', () => {
    for (const [code, rpc] of Object.entries(SPEC_RPC)) {
      assert.equal(ERROR_TABLE[code as keyof typeof ERROR_TABLE].rpc, rpc, code);
    }
  });
  it('gives RPC codes that the spec does not fix values unique to one code', () => {
    const shared = new Set(Object.values(SPEC_RPC).concat([-32603]));
    const seen = new Map<number, string>();
    for (const [code, { rpc }] of Object.entries(ERROR_TABLE)) {
      if (shared.has(rpc)) continue;
      assert.ok(!seen.has(rpc), `${code} collides with ${seen.get(rpc)} on ${rpc}`);
      seen.set(rpc, code);
    }
  });
  it('takes the status of a ServiceError from the table', () => {
    const e = new ServiceError('SESSION_BUSY', 'turn already running', { session_id: 'x' });
    assert.equal(e.status, 409);
    assert.deepEqual(e.details, { session_id: 'x' });
  });
});
