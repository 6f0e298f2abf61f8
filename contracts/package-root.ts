// contracts/package-root.ts: where the files the server reads at runtime live (README.md, ui/, skills/).
// From source this module is contracts/package-root.ts; in the build (scripts/build.mjs) every module is
// bundled into a file directly under dist/. Both are one folder below the package root, so one relative
// URL serves both ways of running.

/** The package root (the folder holding package.json, README.md, ui/ and skills/), as a file: URL ending in '/'. */
const PACKAGE_ROOT = new URL('../', import.meta.url);

/** A file or folder under the package root (`'ui/'`, `'README.md'`), as a file: URL. */
export function packageFile(relative: string): URL {
  return new URL(relative, PACKAGE_ROOT);
}
