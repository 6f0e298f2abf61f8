// actors/skills/git-source.ts: a git repository of skills, cloned into the realm with the system `git`
// (never a library). The clone is made once per (url, ref) and reused; a failed clone (offline, bad URL)
// is reported as the source's failure and retried on the next use. Used by skill-catalog.ts.
import { execFile } from 'node:child_process';
import { mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';

export interface GitCheckout {
  dir: string;
  /** The checked-out commit. */
  commit: string;
}

const CLONE_TIMEOUT_MS = 120_000;

function git(args: string[], cwd?: string): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    execFile(
      'git',
      args,
      {
        cwd,
        timeout: CLONE_TIMEOUT_MS,
        maxBuffer: 1 << 20,
        // Never prompt for credentials: an unreachable or private remote fails at once.
        env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: 'echo' },
      },
      (err, stdout, stderr) => {
        if (err)
          reject(
            new Error(
              String(stderr || err.message)
                .trim()
                .split('\n')
                .slice(-3)
                .join(' '),
            ),
          );
        else resolvePromise(stdout.trim());
      },
    );
  });
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

export class GitSkillSource {
  private checkout: Promise<GitCheckout> | null = null;

  constructor(
    readonly url: string,
    readonly ref: string | undefined,
    private readonly dir: string,
  ) {}

  /** The local checkout, cloning it on first use. Rejects with git's own message when the clone fails. */
  ensure(): Promise<GitCheckout> {
    if (!this.checkout) {
      const attempt = this.clone();
      this.checkout = attempt;
      attempt.catch(() => {
        if (this.checkout === attempt) this.checkout = null;
      });
    }
    return this.checkout;
  }

  private async clone(): Promise<GitCheckout> {
    const done = join(this.dir, '.git');
    if (!(await exists(done))) {
      await rm(this.dir, { recursive: true, force: true });
      await mkdir(this.dir, { recursive: true });
      const args = ['clone', '--quiet', '--depth', '1', ...(this.ref ? ['--branch', this.ref] : []), '--', this.url, this.dir];
      try {
        await git(args);
      } catch (err) {
        await rm(this.dir, { recursive: true, force: true });
        throw err;
      }
    }
    return { dir: this.dir, commit: await git(['rev-parse', 'HEAD'], this.dir) };
  }
}
