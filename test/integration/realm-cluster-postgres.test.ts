// Several processes on one postgres realm form a cluster: no acknowledged turn is lost, reads never lag a commit,
// and a kill -9 campaign keeps every acknowledged turn exactly once (the suite: test/helpers/realm-cluster-suite.ts).
import { realmClusterSuite } from '../helpers/realm-cluster-suite.ts';

await realmClusterSuite(['postgres']);
