// contracts/routes-help.ts: the POST /help catalog entry. A help question runs a real session whose
// system prompt is built from Warren's own documentation (actors/turn-features/help.ts).
import { Type, type Static } from 'typebox';
import type { RouteDef } from './route.ts';
import { TurnResponse } from './session.ts';
import { HelpRequest } from './turn-features.ts';

/** The turn response of the help session, plus the execution mode it answered in. */
export const HelpResponse = Type.Object(
  {
    ...TurnResponse.properties,
    execution_mode: Type.Union([Type.Literal('explain_only'), Type.Literal('plan_execution')]),
  },
  { $id: 'HelpResponse' },
);
export type HelpResponse = Static<typeof HelpResponse>;

export const HELP_ROUTE = {
  ask: {
    id: 'help.ask',
    method: 'POST',
    path: '/help',
    summary: 'Answer a question about Warren with a help session',
    body: HelpRequest,
    response: { status: 200, schema: HelpResponse },
    errors: ['BAD_REQUEST', 'SESSION_CREATED_WITH_TURN_FAILURE', 'PROVIDER_ERROR', 'AGENT_ERROR', 'BUDGET_EXHAUSTED', 'HOOK_DENIED'],
  },
} satisfies Record<string, RouteDef>;

/** In catalog order (route registration and OpenAPI follow it). */
export const HELP_ROUTES: RouteDef[] = Object.values(HELP_ROUTE);
