// actors/auth/realm-key.ts: the realm credential key and the AES-256-GCM sealing of secrets at rest.
// The key is 32 random bytes in `<realm dir>/credentials.key`, created once with mode 0600 (no OS keyring
// is used). app.ts opens it at startup; credential-store.ts seals and opens every secret with it.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { chmod, open, readFile } from 'node:fs/promises';
import type { SealedSecret, SecretMaterial } from '../../contracts/auth.ts';

export const REALM_KEY_FILE = 'credentials.key';
const KEY_BYTES = 32;

/** Seals and opens secret material; the associated data binds a ciphertext to its record key. */
export interface RealmCipher {
  seal(aad: string, material: SecretMaterial): SealedSecret;
  /** Undefined when the ciphertext does not open under this key (a replaced or lost key file). */
  open(aad: string, sealed: SealedSecret): SecretMaterial | undefined;
}

/** Reads the key file, creating it (0600, exclusive) when absent. A key of the wrong size is an error. */
export async function openRealmKey(path: string): Promise<RealmCipher> {
  let key: Buffer;
  try {
    key = Buffer.from((await readFile(path, 'utf8')).trim(), 'base64');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    key = randomBytes(KEY_BYTES);
    try {
      const handle = await open(path, 'wx', 0o600);
      try {
        await handle.writeFile(`${key.toString('base64')}\n`);
        await handle.sync();
      } finally {
        await handle.close();
      }
    } catch (createErr) {
      // Another process created it first: use theirs.
      if ((createErr as NodeJS.ErrnoException).code !== 'EEXIST') throw createErr;
      key = Buffer.from((await readFile(path, 'utf8')).trim(), 'base64');
    }
  }
  if (key.length !== KEY_BYTES) throw new Error(`realm credential key ${path} is not ${KEY_BYTES} bytes`);
  // A umask can only narrow the mode, but an existing file may have been widened by hand.
  await chmod(path, 0o600);
  return cipherFor(key);
}

function cipherFor(key: Buffer): RealmCipher {
  return {
    seal(aad, material) {
      const iv = randomBytes(12);
      const c = createCipheriv('aes-256-gcm', key, iv);
      c.setAAD(Buffer.from(aad, 'utf8'));
      const data = Buffer.concat([c.update(JSON.stringify(material), 'utf8'), c.final()]);
      return { v: 1, iv: iv.toString('base64'), tag: c.getAuthTag().toString('base64'), data: data.toString('base64') };
    },
    open(aad, sealed) {
      try {
        const d = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64'));
        d.setAAD(Buffer.from(aad, 'utf8'));
        d.setAuthTag(Buffer.from(sealed.tag, 'base64'));
        const text = Buffer.concat([d.update(Buffer.from(sealed.data, 'base64')), d.final()]).toString('utf8');
        return JSON.parse(text) as SecretMaterial;
      } catch {
        return undefined;
      }
    },
  };
}
