// actors/workgraph/wg-tool-port.ts: adapts the WorkGraphHost to the port the workgraph_* tools call
// (tools/workgraph-tools.ts): a tool call acts as its session (owner key `session:<id>`), never as host.
import type { Tool } from '../../tools/tool.ts';
import { createWorkGraphTools, type WorkGraphToolPort } from '../../tools/workgraph-tools.ts';
import { sessionCaller, type WorkGraphHost } from './wg-host.ts';

/** The workgraph_* tools over `host` (the module offers them to sessions that enabled them). */
export function workGraphTools(host: WorkGraphHost): Tool[] {
  return createWorkGraphTools(workGraphToolPort(host));
}

function workGraphToolPort(host: WorkGraphHost): WorkGraphToolPort {
  return {
    create: (_sid, i) => host.create(i),
    get: (i) => host.get(i),
    list: (i) => host.list(i),
    ready: (i) => host.ready(i),
    snapshot: (i) => host.snapshot(i),
    events: (i) => host.events(i),
    claim: (sid, i) => host.claim(sessionCaller(sid), i),
    release: (sid, i) => host.release(sessionCaller(sid), i),
    update: (sid, i) => host.update(sessionCaller(sid), i),
    block: (sid, i) => host.block(sessionCaller(sid), i),
    close: (sid, i) => host.close(sessionCaller(sid), i),
    link: (sid, i) => host.link(sessionCaller(sid), i),
    addEvidence: (sid, i) => host.addEvidence(sessionCaller(sid), i),
  };
}
