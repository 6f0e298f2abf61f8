// test/http/server-node.test.ts: runs the transport conformance suite against the node:http transport.
import { httpServerConformance } from '../conformance/http-server.suite.ts';

httpServerConformance('node');
