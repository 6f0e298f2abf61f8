// contracts/events.ts: session event envelope, SSE query, and the structural ledger read.
import { Type } from 'typebox';

/** The `data:` of every SSE frame after session_loaded (wire-notes §2.2). */
export const EventEnvelope = Type.Object(
  {
    event_id: Type.String(),
    source: Type.Object({ type: Type.Literal('session'), session_id: Type.String() }),
    seq: Type.Integer({ minimum: 1 }),
    timestamp_ms: Type.Integer(),
    payload: Type.Object({ type: Type.String() }, { additionalProperties: true }),
  },
  { $id: 'EventEnvelope' },
);

const Seq = Type.String({ pattern: '^[0-9]{1,15}$' });

export const EventsQuery = Type.Object({
  after_seq: Type.Optional(Seq),
  request_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
});

export const LedgerQuery = Type.Object({
  after_seq: Type.Optional(Seq),
  to_seq: Type.Optional(Seq),
  limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,5}$' })),
});

export const LedgerPage = Type.Object(
  {
    session_id: Type.String(),
    events: Type.Array(EventEnvelope),
    last_seq: Type.Integer(),
    has_more: Type.Boolean(),
  },
  { $id: 'LedgerPage' },
);
