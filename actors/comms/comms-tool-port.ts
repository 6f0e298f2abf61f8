// actors/comms/comms-tool-port.ts: binds the comms tools (tools/comms-tools.ts) to one session through
// the comms host, so the module unit (http/) hands out tools without importing tools/.
import type { CommsSendRequest } from '../../contracts/comms.ts';
import { createCommsTools } from '../../tools/comms-tools.ts';
import type { Tool } from '../../tools/tool.ts';
import type { ToolSource } from '../tool-contributions.ts';
import type { CommsHost } from './comms-host.ts';
import { replyToPeer, sendComms } from './comms-send.ts';

/** The comms tools of each session with a comms name, bound to that session. */
export function commsToolSource(host: CommsHost): ToolSource {
  return { toolsFor: (sessionId) => commsToolsFor(host, sessionId) };
}

/** The comms tools acting on behalf of `sessionId`. */
function commsToolsFor(host: CommsHost, sessionId: string): Tool[] {
  return createCommsTools({
    peers: () => host.peers(sessionId),
    send: (command) => sendComms(host, { ...command, session_id: sessionId } as CommsSendRequest),
    reply: (args) => replyToPeer(host, sessionId, args),
  });
}
