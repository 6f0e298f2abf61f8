// http/handlers/observe.ts: GET /metrics (Prometheus text from the app's own registry) and the actor
// viewer's static files: ui/index.html, ui/viewer.js and the modules it imports (viewer-net.js,
// viewer-chart.js, viewer-detail.js, viewer-replay.js), ui/viewer.css (committed plain files, no build step) and elkjs's
// browser bundle from node_modules. Files are read once, on first request.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { HandlerResult, HandlerTable } from '../handler.ts';
import { packageFile } from '../../contracts/package-root.ts';

/** What GET /metrics needs (actors/observe/metrics.ts provides it). */
export interface MetricsSource {
  scrape(): Promise<{ contentType: string; text: string }>;
}

const UI_DIR = packageFile('ui/');

function assetPath(name: string): string {
  if (name === 'elk.js') return createRequire(import.meta.url).resolve('elkjs/lib/elk.bundled.js');
  return fileURLToPath(new URL(name, UI_DIR));
}

const TYPES: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'viewer.js': 'text/javascript; charset=utf-8',
  'viewer-net.js': 'text/javascript; charset=utf-8',
  'viewer-chart.js': 'text/javascript; charset=utf-8',
  'viewer-detail.js': 'text/javascript; charset=utf-8',
  'viewer-replay.js': 'text/javascript; charset=utf-8',
  'viewer.css': 'text/css; charset=utf-8',
  'elk.js': 'text/javascript; charset=utf-8',
};

/** Handlers of the metrics route and the viewer's files. */
export function observeHandlers(metrics: MetricsSource): HandlerTable {
  const cache = new Map<string, Promise<string>>();
  const asset = async (name: string): Promise<HandlerResult> => {
    let text = cache.get(name);
    if (!text) {
      text = readFile(assetPath(name), 'utf8');
      cache.set(name, text);
      text.catch(() => cache.delete(name));
    }
    return { status: 200, text: await text, headers: { 'content-type': TYPES[name], 'cache-control': 'no-cache' } };
  };
  return {
    'observe.metrics': async () => {
      const { contentType, text } = await metrics.scrape();
      return { status: 200, text, headers: { 'content-type': contentType } };
    },
    'ui.page': () => asset('index.html'),
    'ui.script': () => asset('viewer.js'),
    'ui.net': () => asset('viewer-net.js'),
    'ui.chart': () => asset('viewer-chart.js'),
    'ui.detail': () => asset('viewer-detail.js'),
    'ui.replay': () => asset('viewer-replay.js'),
    'ui.style': () => asset('viewer.css'),
    'ui.elk': () => asset('elk.js'),
  };
}
