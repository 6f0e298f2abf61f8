// tools/skill-tools.ts: the skill tools a session's model uses to find and load skills during a turn:
// browse_skills, load_skill, skill_read_resource. Contributed by the skills module (with the builtin
// tool category); the catalog behind them is actors/skills/skill-catalog.ts, passed in as SkillTools.
import { Type } from 'typebox';
import { compileArgs, invalidArgs, jsonResult } from './tool-args.ts';
import type { Tool, ToolOutcome } from './tool.ts';

/** What the tools need of the skill catalog. Methods reject with a coded error for unknown skills. */
export interface SkillToolsBackend {
  browse(): Promise<Array<{ name: string; description: string; scope: string }>>;
  load(name: string, maxBytes: number): Promise<{ text: string; skill_key: { source_uuid: string; skill_name: string } }>;
  resource(name: string, path: string): Promise<string>;
  maxInjectionBytes(): number;
}

const BrowseInput = Type.Object({ query: Type.Optional(Type.String()) }, { additionalProperties: false });
const LoadInput = Type.Object({ name: Type.String({ minLength: 1 }) }, { additionalProperties: false });
const ResourceInput = Type.Object(
  { name: Type.String({ minLength: 1 }), path: Type.String({ minLength: 1 }) },
  { additionalProperties: false },
);

function failure(err: unknown): ToolOutcome {
  return { content: err instanceof Error ? err.message : String(err), is_error: true };
}

export function createSkillTools(backend: SkillToolsBackend): Tool[] {
  const browse = compileArgs(BrowseInput);
  const load = compileArgs(LoadInput);
  const resource = compileArgs(ResourceInput);
  return [
    {
      name: 'browse_skills',
      description: 'List the skills available to you (name, description, scope), optionally filtered by a query.',
      input_schema: browse.jsonSchema,
      async execute(raw) {
        const p = browse.parse(raw);
        if (!p.ok) return invalidArgs('browse_skills', p.message);
        const words = (p.value.query ?? '').toLowerCase().split(/\s+/).filter(Boolean);
        const all = await backend.browse();
        const hits = words.length ? all.filter((s) => words.some((w) => `${s.name} ${s.description}`.toLowerCase().includes(w))) : all;
        return jsonResult({ skills: hits });
      },
    },
    {
      name: 'load_skill',
      description: 'Load a skill by name: returns its instructions as a skill_context block. Follow them for the task at hand.',
      input_schema: load.jsonSchema,
      async execute(raw) {
        const p = load.parse(raw);
        if (!p.ok) return invalidArgs('load_skill', p.message);
        try {
          const s = await backend.load(p.value.name, backend.maxInjectionBytes());
          return {
            content: `<skill_context skill="${s.skill_key.skill_name}" source="${s.skill_key.source_uuid}">\n${s.text}\n</skill_context>`,
          };
        } catch (err) {
          return failure(err);
        }
      },
    },
    {
      name: 'skill_read_resource',
      description: 'Read one resource file of a skill (a path relative to the skill folder, as listed when the skill was loaded).',
      input_schema: resource.jsonSchema,
      async execute(raw) {
        const p = resource.parse(raw);
        if (!p.ok) return invalidArgs('skill_read_resource', p.message);
        try {
          return { content: await backend.resource(p.value.name, p.value.path) };
        } catch (err) {
          return failure(err);
        }
      },
    },
  ];
}
