// actors/skills/skill-tools-backend.ts: the skill tools (tools/skill-tools.ts) bound to a SkillCatalog,
// for the skills module to contribute to sessions.
import type { Tool } from '../../tools/tool.ts';
import { createSkillTools } from '../../tools/skill-tools.ts';
import type { SkillCatalog } from './skill-catalog.ts';

export function catalogSkillTools(catalog: SkillCatalog, maxInjectionBytes: () => number): Tool[] {
  return createSkillTools({
    browse: async () =>
      (await catalog.list()).filter((s) => s.is_active).map((s) => ({ name: s.name, description: s.description, scope: s.scope })),
    load: async (name, max) => {
      const r = await catalog.resolve([name], max);
      return { text: r.skills[0].text, skill_key: r.skills[0].key };
    },
    resource: (name, path) => catalog.resource(name, path),
    maxInjectionBytes,
  });
}
