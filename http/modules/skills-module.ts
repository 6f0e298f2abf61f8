// http/modules/skills-module.ts: the skills module. Skill sources (embedded skills/ folder, project
// `<context-root>/.warren/skills`, user `<user-config-root>/skills`, `[skills] repositories` cloned into
// the realm), GET /skills, turn skill refs (RuntimeDeps.skills) and the skill tools.
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SkillCatalog } from '../../actors/skills/skill-catalog.ts';
import { SKILL_ROUTES } from '../../contracts/skills.ts';
import { catalogSkillTools } from '../../actors/skills/skill-tools-backend.ts';
import { skillHandlers } from '../handlers/skills.ts';
import type { ModuleContext, ModuleUnit } from '../module-unit.ts';
import { packageFile } from '../../contracts/package-root.ts';

/** The skills Warren ships (the repository's skills/ folder). */
const EMBEDDED_SKILLS_DIR = fileURLToPath(packageFile('skills/'));

export function skillsModule(ctx: ModuleContext): ModuleUnit {
  const cfg = () => ctx.config.current().skills;
  const catalog = new SkillCatalog({
    embeddedDir: EMBEDDED_SKILLS_DIR,
    projectDir: join(ctx.realm.contextRoot, '.warren', 'skills'),
    userDir: ctx.realm.userConfigRoot ? join(ctx.realm.userConfigRoot, 'skills') : undefined,
    gitRoot: join(ctx.realm.dir ?? join(tmpdir(), `warren-${ctx.realm.realmId}`), 'skills-git'),
    repositories: () => cfg().repositories,
    // e.g. the embedded workgraph-workflow skill exists only while the work_graph capability is on.
    capabilityAvailable: (id) => ctx.supervisor.capabilities.status(id) === 'Available',
  });
  const enabled = () => cfg().enabled;
  const maxInjectionBytes = () => cfg().max_injection_bytes;
  ctx.supervisor.deps.skills = { enabled, maxInjectionBytes, resolve: (refs, max) => catalog.resolve(refs, max) };
  const tools = catalogSkillTools(catalog, maxInjectionBytes);
  return {
    name: 'skills',
    routes: SKILL_ROUTES,
    handlers: skillHandlers({ enabled, list: () => catalog.list() }),
    // The skill tools come with the builtin tool category, while skills are enabled.
    tools: { flag: 'builtins', capability: 'skills', tools },
    configKeys: ['skills'],
    capabilities: [{ id: 'skills' }],
  };
}
