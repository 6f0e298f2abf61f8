// actors/comms/comms-errors.ts: comms failures and the checksum token, shared by the comms host, the
// send path and the HTTP handlers.
import { createHash } from 'node:crypto';

/** Why a comms send failed at the peer (answered 500 with this lowercase code, wire-notes §2.7). */
export type CommsFailure = 'peer_not_found_or_not_trusted' | 'peer_unreachable' | 'peer_admission_dropped' | 'peer_input_rejected';

export class CommsSendError extends Error {
  constructor(
    readonly code: CommsFailure,
    message: string,
  ) {
    super(message);
    this.name = 'CommsSendError';
  }
}

/** SHA-256 of the subject, hex: the token a `checksum_token` request is answered with. */
export function checksumToken(subject: string): string {
  return createHash('sha256').update(subject, 'utf8').digest('hex');
}
