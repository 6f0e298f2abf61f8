// contracts/extensions.ts: GET /warren/extensions, the one Warren-specific route that tells a client
// which extensions beyond SPEC.md this server has (they are never ids in /capabilities) and where
// their routes, headers and config keys are. Each extension's schemas live in its own contract file.
import { Type, type Static } from 'typebox';
import type { RouteDef } from './route.ts';

export const ExtensionInfo = Type.Object({
  name: Type.String(),
  description: Type.String(),
  routes: Type.Array(Type.String()),
  request_headers: Type.Optional(Type.Array(Type.String())),
  request_fields: Type.Optional(Type.Array(Type.String())),
  config_keys: Type.Array(Type.String()),
});
export type ExtensionInfo = Static<typeof ExtensionInfo>;

const ExtensionList = Type.Object({ extensions: Type.Array(ExtensionInfo) }, { $id: 'ExtensionList' });

export const EXTENSION_ROUTES: RouteDef[] = [
  {
    id: 'warren.extensions',
    method: 'GET',
    path: '/warren/extensions',
    summary: 'Warren extensions beyond the interface specification, and how to use them',
    response: { status: 200, schema: ExtensionList },
    errors: [],
  },
];
