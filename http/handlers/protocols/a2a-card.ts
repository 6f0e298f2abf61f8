// http/handlers/protocols/a2a-card.ts: Warren's A2A agent card in both protocol versions. A request with
// an `A2A-Version` header of 1.0 or later (what @a2a-js/sdk's card resolver sends) gets the 1.0 card:
// `supportedInterfaces` listing the JSON-RPC endpoint twice, for protocol 1.0 and for 0.3 (the same URL:
// the method names tell the wires apart), proto-JSON security schemes. Without the header (A2A says that
// means 0.3) the card has the 0.3 shape: `url`, `preferredTransport`, `protocolVersion` 0.3.0.

const NAME = 'Warren';
const DESCRIPTION = "The realm's default Warren agent: each A2A task is one agent turn; the task's contextId is the Warren session id.";
const KEY_DESCRIPTION = 'A Warren inbound API key (wk_...), when the realm requires keys: scope read for this card, sessions for /a2a';
const MODES = ['text/plain', 'application/json'];
const SKILLS = [
  {
    id: 'warren-turn',
    name: 'Agent turn',
    description: "One turn of the realm's default agent with its configured tools, in the session named by contextId",
    tags: ['chat', 'tools'],
  },
];

/** True when the request names A2A protocol 1.0 or later (`A2A-Version: 1.0`). */
export function wantsV1(headers: Record<string, string>): boolean {
  const m = /^\s*(\d+)(?:\.(\d+))?/.exec(headers['a2a-version'] ?? '');
  return !!m && Number(m[1]) >= 1;
}

export function agentCardV1(base: string): Record<string, unknown> {
  const url = `${base}/a2a`;
  return {
    name: NAME,
    description: DESCRIPTION,
    supportedInterfaces: [
      { url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
    ],
    version: '1',
    capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: true },
    securitySchemes: { warren_key: { httpAuthSecurityScheme: { scheme: 'bearer', description: KEY_DESCRIPTION } } },
    defaultInputModes: MODES,
    defaultOutputModes: MODES,
    skills: SKILLS,
  };
}

export function agentCardV03(base: string): Record<string, unknown> {
  const url = `${base}/a2a`;
  return {
    protocolVersion: '0.3.0',
    name: NAME,
    description: DESCRIPTION,
    url,
    preferredTransport: 'JSONRPC',
    additionalInterfaces: [{ url, transport: 'JSONRPC' }],
    version: '1',
    capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: false },
    supportsAuthenticatedExtendedCard: true,
    securitySchemes: { warren_key: { type: 'http', scheme: 'bearer', description: KEY_DESCRIPTION } },
    defaultInputModes: MODES,
    defaultOutputModes: MODES,
    skills: SKILLS,
  };
}
