// scripts/bundle-externals.mjs: the esbuild plugin both builds use (scripts/build.mjs for dist/,
// scripts/build-tests.mjs for the test run). npm packages stay external (native modules and packages that
// start workers from their own files load from node_modules as usual), except pure-JavaScript packages whose
// module graph costs more to load than their code: typebox is a few hundred small ES modules, undici about a
// hundred CommonJS files; resolving, reading and linking each file costs every process (about 0.6 CPU-s for
// typebox, 0.1-0.2 for the rest). Bundled, each is one parse. CommonJS code in an ES bundle `require`s the
// built-ins it needs through the `require` that REQUIRE_BANNER defines at the top of every output file.
import { readFileSync } from 'node:fs';

const BUNDLED_PACKAGES = /^(typebox|eventsource-parser|undici|prom-client|xstate|ws|smol-toml)(\/|$)/;

/** esbuild `banner`: a `require` for the CommonJS packages bundled into ES output (see above). */
export const REQUIRE_BANNER = {
  js: "import { createRequire as __warrenCreateRequire } from 'node:module'; const require = __warrenCreateRequire(import.meta.url);",
};

export const externals = {
  name: 'externals',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('node:') || !BUNDLED_PACKAGES.test(args.path)) return { path: args.path, external: true };
      return undefined;
    });
  },
};

// undici's cookie helpers read `globalThis.Headers` when undici loads, to accept Node's own Headers
// objects too. That one read loads Node's internal copy of undici, which compiles its llhttp WebAssembly
// parser at once: about 10 MB of resident memory (compiled code, wasm memory, the compiler's pages) in a
// server that has not made a request. The bundle makes the check on its first use instead; the same
// classes are accepted. If undici's file changes, the build says so rather than quietly loading it again.
const UNDICI_COOKIES = /[\\/]undici[\\/]lib[\\/]web[\\/]cookies[\\/]index\.js$/;
const EAGER_BRAND_CHECK = 'const brandChecks = webidl.brandCheckMultiple([Headers, globalThis.Headers].filter(Boolean))';
const LAZY_BRAND_CHECK =
  'let eagerBrandChecks; const brandChecks = (o) => (eagerBrandChecks ??= webidl.brandCheckMultiple([Headers, globalThis.Headers].filter(Boolean)))(o)';
const lazyGlobalHeaders = {
  name: 'lazy-global-headers',
  setup(b) {
    b.onLoad({ filter: UNDICI_COOKIES }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes(EAGER_BRAND_CHECK)) {
        return { errors: [{ text: `${args.path} no longer has the line scripts/bundle-externals.mjs defers; update lazyGlobalHeaders` }] };
      }
      return { contents: text.replace(EAGER_BRAND_CHECK, LAZY_BRAND_CHECK), loader: 'js' };
    });
  },
};

/** esbuild options every build shares (production, tests, benchmarks): one ES bundle per entry, with chunks. */
export const BASE_OPTIONS = {
  bundle: true,
  splitting: true,
  format: 'esm',
  banner: REQUIRE_BANNER,
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  legalComments: 'none',
  logLevel: 'warning',
};

/** The production build's options (scripts/build.mjs; bench/build-server.ts builds the bench server the same way). */
export const PRODUCTION_OPTIONS = {
  ...BASE_OPTIONS,
  plugins: [externals, lazyGlobalHeaders],
  chunkNames: 'chunk-[hash]',
  minifyWhitespace: true,
  minifySyntax: true,
};
