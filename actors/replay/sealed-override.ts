// actors/replay/sealed-override.ts: a turn recording keeps the request's `hooks_override` (a replay runs
// those hooks again), and an override's hook runtimes can carry credentials (env values, headers, a
// token in a URL or an argument). In the realm's store the recorded override is therefore sealed with the
// realm key (`{sealed: …}`, the same AES-256-GCM as stored credentials and persisted MCP servers); a
// replay and an export open it. A realm without a key directory (nothing at rest) keeps it as sent.
import type { SealedSecret } from '../../contracts/auth.ts';
import type { TurnRecording } from '../../contracts/replay.ts';
import type { RealmCipher } from '../auth/realm-key.ts';

type Features = NonNullable<TurnRecording['input']['features']>;

const AAD = 'recording:hooks_override';

function isSealed(v: unknown): v is { sealed: SealedSecret } {
  return !!v && typeof v === 'object' && 'sealed' in v && Object.keys(v).length === 1;
}

/** The features as stored: a `hooks_override` sealed when there is a cipher. */
export function sealFeatures(features: Features, cipher: RealmCipher | undefined): Features {
  if (!cipher || features.hooks_override === undefined || isSealed(features.hooks_override)) return features;
  return { ...features, hooks_override: { sealed: cipher.seal(AAD, { secret: JSON.stringify(features.hooks_override) }) } };
}

/**
 * The features with the `hooks_override` opened. A sealed override this realm's key does not open (a
 * replaced key) is left out, with `lost: true`, so the caller can say so.
 */
export function openFeatures(features: Features | undefined, cipher: RealmCipher | undefined): { features?: Features; lost?: boolean } {
  if (!features || !isSealed(features.hooks_override)) return { features };
  const text = cipher?.open(AAD, features.hooks_override.sealed)?.secret;
  const { hooks_override: _sealed, ...rest } = features;
  if (text === undefined) return { features: rest, lost: true };
  return { features: { ...rest, hooks_override: JSON.parse(text) as unknown } };
}
