#!/usr/bin/env node
// bin/warren.mjs: the `warren` executable (`npx warren serve ...`). Registers tsx so Node can load the
// TypeScript sources, then runs main.ts, which reads process.argv itself.
import { register } from 'tsx/esm/api';

register();
await import(new URL('../main.ts', import.meta.url).href);
