// contracts/skills.ts: the skills resource (SPEC.md "Skills", wire-notes §2.8): skill keys and refs,
// the GET /skills body and its route, and the per-turn skill diagnostics of a turn response.
// actors/skills/* resolve skills; http/handlers/skills.ts serves the route.
import { Type, type Static } from 'typebox';
import type { RouteDef } from './route.ts';

/** Identifies one skill: the source it comes from and its name within that source. */
export const SkillKey = Type.Object(
  { source_uuid: Type.String({ minLength: 1 }), skill_name: Type.String({ minLength: 1 }) },
  { $id: 'SkillKey' },
);
export type SkillKey = Static<typeof SkillKey>;

/**
 * A skill reference on a turn request: a bare skill name (the active skill of that name), a full key,
 * or `{skill_name}` alone.
 */
export const SkillRef = Type.Union([Type.String({ minLength: 1 }), SkillKey, Type.Object({ skill_name: Type.String({ minLength: 1 }) })], {
  $id: 'SkillRef',
});
export type SkillRef = Static<typeof SkillRef>;

export const SkillScope = Type.Union([Type.Literal('builtin'), Type.Literal('project'), Type.Literal('user')]);
export type SkillScope = Static<typeof SkillScope>;
export const SkillTransport = Type.Union([Type.Literal('embedded'), Type.Literal('filesystem'), Type.Literal('git')]);
export type SkillTransport = Static<typeof SkillTransport>;

export const SkillSourceInfo = Type.Object(
  {
    source_uuid: Type.String(),
    display_name: Type.String(),
    transport_kind: SkillTransport,
    fingerprint: Type.String(),
    status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('disabled'), Type.Literal('retired')])),
  },
  { $id: 'SkillSourceInfo' },
);
export type SkillSourceInfo = Static<typeof SkillSourceInfo>;

export const SkillEntry = Type.Object(
  {
    key: SkillKey,
    name: Type.String(),
    description: Type.String(),
    scope: SkillScope,
    source: SkillSourceInfo,
    is_active: Type.Boolean(),
    shadowed_by: Type.Optional(SkillKey),
  },
  { $id: 'SkillEntry' },
);
export type SkillEntry = Static<typeof SkillEntry>;

const SkillList = Type.Object({ skills: Type.Array(SkillEntry) }, { $id: 'SkillList' });
type SkillList = Static<typeof SkillList>;

/** What a turn response carries when skills were involved (omitted otherwise). */
export const SkillDiagnostics = Type.Object(
  {
    resolved: Type.Array(SkillKey),
    injection_bytes: Type.Integer({ minimum: 0 }),
    max_injection_bytes: Type.Integer({ minimum: 0 }),
  },
  { $id: 'SkillDiagnostics' },
);
export type SkillDiagnostics = Static<typeof SkillDiagnostics>;

export const SKILL_ROUTES: RouteDef[] = [
  {
    // SPEC.md "Observation and system routes": 404 when skills are not enabled (`[skills] enabled = false`).
    id: 'skills.list',
    method: 'GET',
    path: '/skills',
    summary: 'Active and shadowed skills of every source (embedded, project, user, git)',
    response: { status: 200, schema: SkillList },
    errors: ['NOT_FOUND'],
    capability: 'skills',
  },
];
