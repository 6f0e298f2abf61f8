// test/helpers/tmp-dir.ts: a fresh temporary directory for a test, and a way to remove it.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A temporary directory; `cleanup` removes it and everything in it. */
export interface TmpDir {
  path: string;
  cleanup(): Promise<void>;
}

/** Creates `<os tmpdir>/<prefix>XXXXXX`. */
export async function tmpDir(prefix: string): Promise<TmpDir> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, cleanup: () => rm(path, { recursive: true, force: true }) };
}
