// http/validate.ts: compiles a route's body and query schema (typebox Compile) on the route's first request
// and turns a mismatch into 400 BAD_REQUEST with `details.errors`. Called by http/router.ts. Compiling
// on first use keeps an idle server from holding a compiled validator (its generated code and closures,
// about 15 KB each) for every route of the catalog, most of which a given deployment never serves.
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { ServiceError } from '../contracts/errors.ts';
import type { RouteDef } from '../contracts/route.ts';
import { issuesSentence, readableIssues } from './validation-issues.ts';

/** How many schema errors a 400 reports; the first few are enough to fix a request. */
const MAX_REPORTED_ERRORS = 5;

/** The compiled checks of one route. Both throw ServiceError('BAD_REQUEST') on a mismatch. */
export interface RouteValidators {
  checkBody(value: unknown): void;
  checkQuery(value: Record<string, string>): void;
}

type Check = (value: unknown) => void;

const noCheck: Check = () => {};

/**
 * The body and query checks of every route, keyed by route id; each schema is compiled on its first check.
 * Throws at startup on a duplicate route id (a catalog bug).
 */
export function compileRoutes(routes: readonly RouteDef[]): Map<string, RouteValidators> {
  const out = new Map<string, RouteValidators>();
  for (const route of routes) {
    if (out.has(route.id)) throw new Error(`duplicate route id in catalog: ${route.id}`);
    const checkBody = route.body ? compileCheck(route.body, 'invalid request body') : noCheck;
    const checkQuery = route.query ? compileCheck(route.query, 'invalid query parameters') : noCheck;
    out.set(route.id, { checkBody, checkQuery });
  }
  return out;
}

function compileCheck(schema: TSchema, what: string): Check {
  let compiled: ReturnType<typeof Compile<TSchema>> | undefined;
  return (value) => {
    const validator = (compiled ??= Compile(schema));
    if (validator.Check(value)) return;
    const errors = readableIssues(value, validator.Errors(value), MAX_REPORTED_ERRORS);
    const summary = errors.length > 0 ? `: ${issuesSentence(errors)}` : '';
    throw new ServiceError('BAD_REQUEST', `${what}${summary}`, { errors });
  };
}
