// test/helpers/files-under.ts: every regular file below a directory (recursively), for tests that grep a
// state root for bytes that must never be written (secrets at rest, exports).
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

export async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await filesUnder(p)));
    else if (e.isFile()) out.push(p);
  }
  return out;
}
