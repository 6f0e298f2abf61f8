#!/usr/bin/env node
// bin/warren.mjs: the `warren` executable (`npx warren serve ...`). Runs the production build
// (dist/main.js, made by `npm run build` and at install time by `prepare`) when it exists; otherwise
// registers tsx so Node can load the TypeScript sources and runs main.ts. WARREN_FROM_SOURCE=1 forces the
// sources (e.g. while editing without rebuilding). main.ts reads process.argv itself.
import { existsSync } from 'node:fs';

const built = new URL('../dist/main.js', import.meta.url);
if (process.env.WARREN_FROM_SOURCE !== '1' && existsSync(built)) {
  await import(built.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('../main.ts', import.meta.url).href);
}
