// test/helpers/mount.ts: a real small file system for tests that need one (a full disk, a read-only
// state root): a tmpfs mounted on a fresh temp directory. Mounting needs root; otherwise `skip` says why
// and the test is skipped with that reason. Every mount is unmounted by the test's cleanup and, should the
// process end first, by an exit hook.
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import type { TestContext } from 'node:test';
import { tmpDir } from './tmp-dir.ts';

const run = promisify(execFile);
const mounted = new Set<string>();
let hookInstalled = false;

export interface Mounted {
  path: string;
  /** Remounts with a new size (bytes): a full disk gets room again without losing its files. */
  resize(sizeBytes: number): Promise<void>;
}

/** Why a tmpfs cannot be mounted here, or undefined when it can be tried. */
export function mountUnavailableReason(): string | undefined {
  if (process.platform !== 'linux') return `tmpfs mounts need Linux (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return `mounting a tmpfs needs root (running as uid ${process.getuid?.()})`;
  return undefined;
}

function installHook(): void {
  if (hookInstalled) return;
  hookInstalled = true;
  process.once('exit', () => {
    for (const path of mounted) {
      try {
        execFileSync('umount', ['-l', path], { stdio: 'ignore' });
      } catch {
        // already gone
      }
    }
  });
}

/**
 * Mounts a tmpfs of `sizeBytes` (read-only when asked) on a new temp directory and registers its
 * unmount on `t`. Returns `{ skip }` when this machine cannot mount one.
 */
export async function mountTmpfs(
  t: Pick<TestContext, 'after'>,
  sizeBytes: number,
  opts: { readOnly?: boolean } = {},
): Promise<Mounted | { skip: string }> {
  const reason = mountUnavailableReason();
  if (reason) return { skip: reason };
  const dir = await tmpDir('warren-mnt-');
  try {
    await run('mount', ['-t', 'tmpfs', '-o', `size=${sizeBytes}${opts.readOnly ? ',ro' : ''},mode=0755`, 'tmpfs', dir.path]);
  } catch (err) {
    await dir.cleanup();
    return { skip: `mount -t tmpfs failed: ${(err as { stderr?: string }).stderr?.trim() || (err as Error).message}` };
  }
  installHook();
  mounted.add(dir.path);
  t.after(async () => {
    try {
      await run('umount', [dir.path]);
    } catch {
      await run('umount', ['-l', dir.path]).catch(() => undefined);
    }
    mounted.delete(dir.path);
    await dir.cleanup();
  });
  return {
    path: dir.path,
    resize: async (size) => {
      await run('mount', ['-o', `remount,size=${size}`, dir.path]);
    },
  };
}
