// http/handlers/skills.ts: GET /skills (contracts/skills.ts). 404 while `[skills] enabled = false`.
import { ServiceError } from '../../contracts/errors.ts';
import type { SkillEntry } from '../../contracts/skills.ts';
import type { HandlerTable } from '../handler.ts';

export interface SkillsDeps {
  enabled(): boolean;
  list(): Promise<SkillEntry[]>;
}

export function skillHandlers(deps: SkillsDeps): HandlerTable {
  return {
    'skills.list': async () => {
      // wire-notes §2.8: no skill runtime → 404 {error: "skills not enabled", code: "NOT_FOUND"}.
      if (!deps.enabled()) throw new ServiceError('NOT_FOUND', 'skills not enabled');
      return { status: 200, body: { skills: await deps.list() } };
    },
  };
}
