// storage/better-sqlite3.ts: better-sqlite3, loaded when a sqlite realm opens rather than at every start
// (its native binding is resident memory every other backend would carry for nothing).
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

const require = createRequire(import.meta.url);
let loaded: typeof BetterSqlite3 | undefined;

/** The better-sqlite3 constructor (with its SqliteError), required on first use. */
export function betterSqlite3(): typeof BetterSqlite3 {
  return (loaded ??= require('better-sqlite3') as typeof BetterSqlite3);
}
