// http/create-server.ts: picks the HTTP transport. uWebSockets.js is the default wherever its native
// binding loads; otherwise (Node >= 22, missing binary) node:http. Called by app.ts.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createNodeServer } from './server-node.ts';
import type { HttpServer, HttpServerOptions, TransportKind } from './transport.ts';

/** Which transport to run: a fixed one, or 'auto' (uWS when it loads natively, else node:http). */
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
 * Creates the HTTP server. 'uws' throws when the native binding is unavailable; 'auto' falls back
 * to node:http and logs the reason at warn.
 */
export async function createHttpServer(kind: TransportChoice, opts: HttpServerOptions): Promise<HttpServer> {
  if (kind === 'node') return createNode(opts);
  const reason = uwsUnavailableReason();
  if (reason === undefined) {
    const { createUwsServer } = await import('./server-uws.ts');
    opts.logger.info({ transport: 'uws' }, 'http transport selected');
    return createUwsServer(opts);
  }
  if (kind === 'uws') throw new Error(`uWebSockets.js transport unavailable: ${reason}`);
  opts.logger.warn({ transport: 'node', reason }, 'uWebSockets.js unavailable, falling back to node:http');
  return createNode(opts);
}

function createNode(opts: HttpServerOptions): HttpServer {
  opts.logger.info({ transport: 'node' }, 'http transport selected');
  return createNodeServer(opts);
}
