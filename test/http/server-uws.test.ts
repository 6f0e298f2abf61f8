// test/http/server-uws.test.ts: runs the transport conformance suite against the uWebSockets.js
// transport, or skips it with the reason when the native binding does not load (e.g. Node >= 22).
import { it } from 'node:test';
import { uwsUnavailableReason } from '../../http/create-server.ts';
import { missingPart } from '../helpers/absent.ts';
import { httpServerConformance } from '../conformance/http-server.suite.ts';

const reason = uwsUnavailableReason();
if (reason === undefined) httpServerConformance('uws');
else it('uWebSockets.js transport conformance', ...missingPart('uws', reason));
