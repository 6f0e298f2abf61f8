// http/create-server.ts: picks the HTTP transport. node:http is the default ('auto'): it answers every
// HTTP/1.x client, HTTP/1.0 and malformed requests included. uWebSockets.js is the opt-in fast path
// ('uws'), where its native binding loads (Node 20 here); see docs/http-api.md "HTTP transports". Called by app.ts.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createNodeServer } from './server-node.ts';
import type { HttpServer, HttpServerOptions, TransportKind } from './transport.ts';

/** Which transport to run: a fixed one, or 'auto' (node:http). */
export type TransportChoice = TransportKind | 'auto';

/**
 * Returns why the native uWS binding cannot be used here, or undefined when it loads.
 * The package itself would silently swap in an incomplete JS shim (no tryEnd/onWritable), so the
 * binary for this platform and Node ABI is loaded directly first; the package's own require then
 * hits the module cache.
 * @internal exported for tests
 */
export function uwsUnavailableReason(): string | undefined {
  // The same switch the package reads: with it set, it would load its JS shim instead of the binary.
  const env = process.env.UWS_USE_FALLBACK?.toLowerCase();
  if (env === '1' || env === 'true') {
    return 'UWS_USE_FALLBACK is set';
  }
  const require = createRequire(import.meta.url);
  let pkgDir: string;
  try {
    pkgDir = dirname(require.resolve('uWebSockets.js/package.json'));
  } catch {
    return 'package uWebSockets.js is not installed';
  }
  const { platform, arch } = process;
  const abi = process.versions.modules;
  const binary = join(pkgDir, 'binaries', `uws_${platform}_${arch}_${abi}.node`);
  if (!existsSync(binary)) {
    return `no uWebSockets.js binary for ${platform}-${arch} Node ABI ${abi} (Node ${process.versions.node})`;
  }
  try {
    require(binary);
  } catch (err) {
    return `uWebSockets.js binary failed to load: ${err instanceof Error ? err.message : String(err)}`;
  }
  return undefined;
}

/**
 * Creates the HTTP server. 'auto' and 'node' give node:http. 'uws' gives uWebSockets.js and throws when
 * its native binding is unavailable (there is no silent fallback from an explicit choice).
 */
export async function createHttpServer(kind: TransportChoice, opts: HttpServerOptions): Promise<HttpServer> {
  if (kind !== 'uws') return createNode(opts);
  const reason = uwsUnavailableReason();
  if (reason !== undefined) throw new Error(`uWebSockets.js transport unavailable: ${reason}`);
  const { createUwsServer } = await import('./server-uws.ts');
  opts.logger.info({ transport: 'uws' }, 'http transport selected');
  return createUwsServer(opts);
}

function createNode(opts: HttpServerOptions): HttpServer {
  opts.logger.info({ transport: 'node' }, 'http transport selected');
  return createNodeServer(opts);
}
