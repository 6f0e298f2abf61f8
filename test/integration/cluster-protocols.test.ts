// The four foreign protocols, each driven by its official client package, through a cluster node that does
// not own the session, on every backend a cluster can share (lmdb and sqlite: one state root; postgres: one
// database). Per backend one cluster of two in-process nodes: node A starts the session (an OpenAI
// response); then the openai, @langchain/langgraph-sdk, @ag-ui/client and @a2a-js/sdk clients, all pointed
// at node B, continue it: plain and streamed turns, a background response, reads of a running turn, cancels
// (test/helpers/protocol-clients.ts). Every turn runs on A (B's model is never called), and A and B read one
// transcript through Warren's REST history. Postgres skips, saying why, where it cannot start.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { allRoundTrips, echoScript } from '../helpers/protocol-clients.ts';
import { SHARED_BACKENDS, sharedBackendSkip, sharedRealm } from '../helpers/shared-realm.ts';

for (const backend of SHARED_BACKENDS) {
  const skip = await sharedBackendSkip(backend);
  describe(`foreign protocol clients through a node that does not own the session (${backend})`, () => {
    it('openai, langgraph-sdk, ag-ui and a2a clients on node B run turns on owner A; one transcript', { skip }, async (t) => {
      const realm = await sharedRealm(t, backend);
      const a = await realm.node(echoScript);
      const b = await realm.node(() => ({ text: 'B must not run turns' }));
      await allRoundTrips(t, a.url, b.url);
      assert.equal(b.provider.requests.length, 0, 'no turn ran on B');
    });
  });
}
