// test/helpers/skill-fixtures.ts: skill folders on disk and a local git repository of skills (created
// with the system git; cloned over a file:// URL, no network) for the skills tests.
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** Writes `<root>/<folder>/SKILL.md` with front matter, plus resource files. */
export async function writeSkill(
  root: string,
  folder: string,
  name: string,
  description: string,
  body: string,
  resources: Record<string, string> = {},
): Promise<void> {
  const dir = join(root, folder);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'SKILL.md'), `---\nname: ${name}\ndescription: ${description}\n---\n${body}\n`);
  for (const [path, text] of Object.entries(resources)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), text);
  }
}

function git(cwd: string, ...args: string[]): void {
  execFileSync('git', args, {
    cwd,
    stdio: 'ignore',
    env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' },
  });
}

/** A git repository at `dir` whose first commit holds the given skills; returns its file:// URL. */
export async function gitSkillRepo(
  dir: string,
  skills: Array<{ folder: string; name: string; description: string; body: string }>,
): Promise<string> {
  await mkdir(dir, { recursive: true });
  git(dir, 'init', '--quiet', '-b', 'main');
  for (const s of skills) await writeSkill(dir, s.folder, s.name, s.description, s.body);
  git(dir, 'add', '-A');
  git(dir, 'commit', '--quiet', '-m', 'skills');
  return pathToFileURL(dir).href;
}
