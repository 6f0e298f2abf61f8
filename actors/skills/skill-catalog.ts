// actors/skills/skill-catalog.ts: every skill source of the realm, in precedence order (project, user,
// git repositories, embedded), the GET /skills inventory with shadowing, and per-turn resolution of
// skill refs into skill_context blocks within `[skills] max_injection_bytes`. The skills module
// (http/modules/skills-module.ts) builds one; session commands and the skill tools call it.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { ServiceError } from '../../contracts/errors.ts';
import type { SkillEntry, SkillKey, SkillRef, SkillScope, SkillSourceInfo, SkillTransport } from '../../contracts/skills.ts';
import { GitSkillSource } from './git-source.ts';
import { readSkillResource, scanSkillFolder, type SkillOnDisk } from './skill-folder.ts';

interface SkillRepositoryConfig {
  url: string;
  ref?: string;
  name?: string;
}

export interface SkillCatalogOptions {
  /** Skills shipped with Warren (the repo's skills/ folder). */
  embeddedDir: string;
  /** `<context-root>/.warren/skills`. */
  projectDir: string;
  /** `<user-config-root>/skills`, when a user config root is given. */
  userDir?: string;
  /** Where git repositories are cloned (inside the realm directory). */
  gitRoot: string;
  /** `[skills] repositories`, read at each use (config can change at runtime). */
  repositories(): ReadonlyArray<string | SkillRepositoryConfig>;
  /**
   * Whether a capability is Available now. A skill whose front matter names a `requires_capability`
   * that is not is left out of the inventory (listing and resolution). Omitted: nothing is gated.
   */
  capabilityAvailable?(id: string): boolean;
}

/** A skill with the source it came from. */
export interface CatalogSkill extends SkillOnDisk {
  key: SkillKey;
  scope: SkillScope;
  source: SkillSourceInfo;
}

/** A source that could not be read (a git clone that failed), reported at resolution. */
interface SourceFailure {
  source_uuid: string;
  display_name: string;
  message: string;
}

export interface Inventory {
  /** Every skill in precedence order; the first of each name is active. */
  skills: CatalogSkill[];
  failures: SourceFailure[];
}

/** One resolved skill ready for injection. */
interface ResolvedSkill {
  key: SkillKey;
  text: string;
}

export interface Resolution {
  skills: ResolvedSkill[];
  injection_bytes: number;
}

/** A deterministic UUID-shaped id for a source location. */
function sourceUuid(kind: string, location: string): string {
  const h = createHash('sha256').update(`${kind}\u0000${location}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16], 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

function keyOf(ref: SkillRef): { source_uuid?: string; skill_name: string } {
  return typeof ref === 'string' ? { skill_name: ref } : ref;
}

/** The text a skill_context block carries. */
function skillText(skill: CatalogSkill): string {
  const resources = skill.resources.length ? `\n\nResources (read with skill_read_resource): ${skill.resources.join(', ')}` : '';
  return `# Skill: ${skill.name}\n${skill.description}\n\n${skill.body}${resources}`;
}

export class SkillCatalog {
  private readonly git = new Map<string, GitSkillSource>();

  constructor(private readonly opts: SkillCatalogOptions) {}

  /** Reads every source. Filesystem sources are re-read each time (they are small); git checkouts are reused. */
  async inventory(): Promise<Inventory> {
    const skills: CatalogSkill[] = [];
    const failures: SourceFailure[] = [];
    const addFolder = async (
      dir: string,
      scope: SkillScope,
      transport: SkillTransport,
      displayName: string,
      location: string,
      fingerprint?: string,
    ) => {
      const scan = await scanSkillFolder(dir);
      const source: SkillSourceInfo = {
        source_uuid: sourceUuid(transport, location),
        display_name: displayName,
        transport_kind: transport,
        fingerprint: fingerprint ?? scan.fingerprint,
        status: 'active',
      };
      const gate = this.opts.capabilityAvailable;
      for (const s of scan.skills) {
        if (s.requires_capability !== undefined && gate && !gate(s.requires_capability)) continue;
        skills.push({ ...s, key: { source_uuid: source.source_uuid, skill_name: s.name }, scope, source });
      }
    };
    await addFolder(this.opts.projectDir, 'project', 'filesystem', 'project skills', this.opts.projectDir);
    if (this.opts.userDir) await addFolder(this.opts.userDir, 'user', 'filesystem', 'user skills', this.opts.userDir);
    for (const repo of this.opts.repositories()) {
      const r = typeof repo === 'string' ? { url: repo } : repo;
      const location = `${r.url}#${r.ref ?? ''}`;
      const uuid = sourceUuid('git', location);
      let src = this.git.get(location);
      if (!src) {
        src = new GitSkillSource(r.url, r.ref, join(this.opts.gitRoot, uuid));
        this.git.set(location, src);
      }
      try {
        const checkout = await src.ensure();
        await addFolder(checkout.dir, 'project', 'git', r.name ?? r.url, location, `git:${checkout.commit}`);
      } catch (err) {
        failures.push({ source_uuid: uuid, display_name: r.name ?? r.url, message: err instanceof Error ? err.message : String(err) });
      }
    }
    await addFolder(this.opts.embeddedDir, 'builtin', 'embedded', 'Warren embedded skills', 'warren-embedded');
    return { skills, failures };
  }

  /** GET /skills: active and shadowed entries. */
  async list(): Promise<SkillEntry[]> {
    const { skills } = await this.inventory();
    const active = new Map<string, SkillKey>();
    return skills.map((s) => {
      const winner = active.get(s.name);
      if (!winner) active.set(s.name, s.key);
      const entry: SkillEntry = {
        key: s.key,
        name: s.name,
        description: s.description,
        scope: s.scope,
        source: s.source,
        is_active: !winner,
      };
      if (winner) entry.shadowed_by = winner;
      return entry;
    });
  }

  /** The skill a ref names: a full key picks that source's skill, a name the active one. */
  async find(ref: SkillRef): Promise<CatalogSkill> {
    const inv = await this.inventory();
    return this.pick(inv, ref);
  }

  private pick(inv: Inventory, ref: SkillRef): CatalogSkill {
    const k = keyOf(ref);
    const found = inv.skills.find((s) => s.name === k.skill_name && (!k.source_uuid || s.key.source_uuid === k.source_uuid));
    if (found) return found;
    const failed = k.source_uuid ? inv.failures.filter((f) => f.source_uuid === k.source_uuid) : inv.failures;
    if (failed.length) {
      // The skill may live in a source that could not be read: say so instead of "unknown".
      throw new ServiceError(
        'SKILL_RESOLUTION_FAILED',
        `skill '${k.skill_name}' could not be resolved: ${failed.map((f) => `${f.display_name}: ${f.message}`).join('; ')}`,
        {
          skill_key: k,
          reason: { reason_type: 'source_unavailable', sources: failed },
        },
      );
    }
    throw new ServiceError('SKILL_NOT_FOUND', `skill not found: ${k.source_uuid ? `${k.source_uuid}/` : ''}${k.skill_name}`, {
      skill_key: k,
    });
  }

  /** Resolves refs (deduplicated) into texts; throws 404 SKILL_NOT_FOUND or 422 SKILL_RESOLUTION_FAILED. */
  async resolve(refs: readonly SkillRef[], maxBytes: number): Promise<Resolution> {
    const inv = await this.inventory();
    const seen = new Set<string>();
    const out: ResolvedSkill[] = [];
    let bytes = 0;
    for (const ref of refs) {
      const skill = this.pick(inv, ref);
      const id = `${skill.key.source_uuid}/${skill.key.skill_name}`;
      if (seen.has(id)) continue;
      seen.add(id);
      const text = skillText(skill);
      bytes += Buffer.byteLength(text);
      if (bytes > maxBytes) {
        throw new ServiceError('SKILL_RESOLUTION_FAILED', `skills exceed [skills] max_injection_bytes (${bytes} > ${maxBytes})`, {
          skill_key: skill.key,
          reason: { reason_type: 'injection_budget_exceeded', injection_bytes: bytes, max_injection_bytes: maxBytes },
        });
      }
      out.push({ key: skill.key, text });
    }
    return { skills: out, injection_bytes: bytes };
  }

  /** A resource of the named skill (skill_read_resource). */
  async resource(ref: SkillRef, path: string): Promise<string> {
    const skill = await this.find(ref);
    const text = await readSkillResource(skill, path);
    if (text === undefined)
      throw new ServiceError('SKILL_NOT_FOUND', `skill '${skill.name}' has no resource '${path}'`, { skill_key: skill.key, path });
    return text;
  }
}
