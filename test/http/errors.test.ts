// test/http/errors.test.ts: the error → response mapping and the spec's irregular cases, exact shapes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { busyOnCreate, durableResumeHold, ServiceError } from '../../contracts/errors.ts';
import { authErrorBody, errorResponse, sessionCreatedWithTurnFailure, webhookInboxFull, webhookUnauthorized } from '../../http/errors.ts';

function capture(): { log: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
      cb();
    },
  });
  return { log: pino({ level: 'debug' }, sink), lines };
}

describe('errorResponse', () => {
  it('maps a ServiceError to {error, code, details} with the table status', () => {
    const { log, lines } = capture();
    assert.deepEqual(errorResponse(new ServiceError('SESSION_NOT_FOUND', 'Session not found: x', { id: 'x' }), log), {
      status: 404,
      body: { error: 'Session not found: x', code: 'SESSION_NOT_FOUND', details: { id: 'x' } },
    });
    assert.equal(lines.length, 0);
  });

  it('omits details when the error has none', () => {
    const { log } = capture();
    assert.deepEqual(errorResponse(new ServiceError('CONFLICT', 'taken'), log).body, { error: 'taken', code: 'CONFLICT' });
  });

  it('maps anything else to an opaque 500 INTERNAL_ERROR logged once at error under err', () => {
    for (const thrown of [new Error('db password is hunter2'), 'a string', undefined]) {
      const { log, lines } = capture();
      assert.deepEqual(errorResponse(thrown, log), { status: 500, body: { error: 'internal error', code: 'INTERNAL_ERROR' } });
      assert.equal(lines.length, 1);
      assert.equal(lines[0].level, 50);
      assert.ok('err' in lines[0] || thrown === undefined);
    }
  });
});

describe('irregular error cases', () => {
  const { log } = capture();

  it('busyOnCreate is 400 BAD_REQUEST, not 409', () => {
    assert.deepEqual(errorResponse(busyOnCreate('s-1'), log), {
      status: 400,
      body: { error: 'session is busy: s-1', code: 'BAD_REQUEST', details: { session_id: 's-1' } },
    });
  });

  it('authErrorBody keeps the status and replies {error} only', () => {
    assert.deepEqual(authErrorBody(new ServiceError('NOT_FOUND', 'Unknown realm: r'), log), {
      status: 404,
      body: { error: 'Unknown realm: r' },
    });
    assert.deepEqual(authErrorBody(new Error('x'), log), { status: 500, body: { error: 'internal error' } });
  });

  it('webhookUnauthorized is 401 {error: invalid webhook secret, code: UNAUTHORIZED}', () => {
    assert.deepEqual(errorResponse(webhookUnauthorized(), log), {
      status: 401,
      body: { error: 'invalid webhook secret', code: 'UNAUTHORIZED' },
    });
  });

  it('webhookInboxFull is 503', () => {
    assert.deepEqual(errorResponse(webhookInboxFull(), log), {
      status: 503,
      body: { error: 'event inbox full', code: 'SERVICE_UNAVAILABLE' },
    });
  });

  it('sessionCreatedWithTurnFailure carries the resumable identity and the cause error', () => {
    const cause = new ServiceError('AGENT_ERROR', 'provider failed', { error: { kind: 'retry_exhausted', terminal: true } });
    const err = sessionCreatedWithTurnFailure('s-2', 'realm-a:s-2', cause);
    assert.equal(err.cause, cause);
    assert.deepEqual(errorResponse(err, log), {
      status: 500,
      body: {
        error: 'session created but its first turn failed: provider failed',
        code: 'SESSION_CREATED_WITH_TURN_FAILURE',
        details: {
          session_id: 's-2',
          session_ref: 'realm-a:s-2',
          session_created: true,
          resumable: true,
          turn_error_code: 'TURN_ABANDONED',
          error: { kind: 'retry_exhausted', terminal: true },
        },
      },
    });
  });

  it('sessionCreatedWithTurnFailure gives details.error a fatal_failure kind when the cause has none', () => {
    const details = sessionCreatedWithTurnFailure('s-3', 'r:s-3', new Error('boom')).details as Record<string, unknown>;
    assert.deepEqual(details.error, { kind: 'fatal_failure', terminal: true });
    assert.equal(details.resumable, true);
  });

  it('durableResumeHold is 409 SESSION_NOT_RUNNING with the durable_resume_hold payload', () => {
    assert.deepEqual(errorResponse(durableResumeHold('s-4', 'evidence_quarantined'), log), {
      status: 409,
      body: {
        error: 'session is held for durable recovery: s-4',
        code: 'SESSION_NOT_RUNNING',
        details: {
          durable_resume_hold: {
            hold_class: 'evidence_quarantined',
            session_error_code: 'SESSION_DURABLE_EVIDENCE_QUARANTINED',
            session_id: 's-4',
            content_retained: true,
          },
        },
      },
    });
  });
});
