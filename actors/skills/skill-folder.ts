// actors/skills/skill-folder.ts: reads one skill source directory from disk. A skill is a folder holding
// a markdown file (SKILL.md, else the first .md file) whose front matter carries `name` and
// `description`; every other file in the folder is a resource. Used by skill-catalog.ts.
import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';

/** One skill as found on disk. */
export interface SkillOnDisk {
  name: string;
  description: string;
  /** The markdown body after the front matter. */
  body: string;
  dir: string;
  /** Resource paths relative to the skill folder (POSIX separators), sorted. */
  resources: string[];
  /** Front matter `requires_capability`: the skill exists only while that capability is Available. */
  requires_capability?: string;
}

export interface FolderScan {
  skills: SkillOnDisk[];
  /** Stable digest of every file's path and bytes: changes whenever the source changes. */
  fingerprint: string;
}

const MAX_FILES_PER_SKILL = 200;

/** Parses `---\nkey: value\n---` front matter (flat keys, optional quotes). Undefined when absent. */
function parseFrontMatter(text: string): { meta: Record<string, string>; body: string } | undefined {
  const m = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(text);
  if (!m) return undefined;
  const meta: Record<string, string> = {};
  for (const line of m[1].split(/\r?\n/)) {
    const kv = /^([A-Za-z0-9_-]+)\s*:\s*(.*)$/.exec(line);
    if (!kv) continue;
    let value = kv[2].trim();
    if (value.length >= 2 && (value[0] === '"' || value[0] === "'") && value.endsWith(value[0])) value = value.slice(1, -1);
    meta[kv[1]] = value;
  }
  return { meta, body: text.slice(m[0].length) };
}

async function isDir(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

async function listFiles(root: string, dir = root, out: string[] = []): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    if (e.name.startsWith('.')) continue;
    const full = join(dir, e.name);
    if (e.isDirectory()) await listFiles(root, full, out);
    else if (e.isFile()) out.push(relative(root, full).split(sep).join('/'));
    if (out.length >= MAX_FILES_PER_SKILL) break;
  }
  return out;
}

/** Scans a source directory; a missing directory is an empty source. Folders without front matter are skipped. */
export async function scanSkillFolder(root: string): Promise<FolderScan> {
  const hash = createHash('sha256');
  const skills: SkillOnDisk[] = [];
  if (!(await isDir(root))) return { skills, fingerprint: 'sha256:' + hash.digest('hex').slice(0, 32) };
  const entries = (await readdir(root, { withFileTypes: true })).filter((e) => e.isDirectory() && !e.name.startsWith('.'));
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const dir = join(root, entry.name);
    const files = await listFiles(dir);
    const main = files.includes('SKILL.md') ? 'SKILL.md' : files.find((f) => !f.includes('/') && f.endsWith('.md'));
    for (const f of files) {
      hash.update(`${entry.name}/${f}\u0000`);
      hash.update(await readFile(join(dir, f)));
    }
    if (!main) continue;
    const parsed = parseFrontMatter(await readFile(join(dir, main), 'utf8'));
    if (!parsed?.meta.name) continue;
    skills.push({
      name: parsed.meta.name,
      description: parsed.meta.description ?? '',
      body: parsed.body.trim(),
      dir,
      resources: files.filter((f) => f !== main),
      ...(parsed.meta.requires_capability ? { requires_capability: parsed.meta.requires_capability } : {}),
    });
  }
  return { skills, fingerprint: 'sha256:' + hash.digest('hex').slice(0, 32) };
}

/** Reads a resource of a skill; refuses paths that leave the skill folder or are not listed resources. */
export async function readSkillResource(skill: SkillOnDisk, path: string): Promise<string | undefined> {
  const normalized = path.replace(/^\.\//, '');
  if (!skill.resources.includes(normalized)) return undefined;
  const full = resolve(skill.dir, normalized);
  if (!full.startsWith(resolve(skill.dir) + sep)) return undefined;
  return readFile(full, 'utf8');
}
