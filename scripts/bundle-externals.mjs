// scripts/bundle-externals.mjs: the esbuild plugin both builds use (scripts/build.mjs for dist/,
// scripts/build-tests.mjs for the test run). npm packages stay external (native modules and packages that
// start workers from their own files load from node_modules as usual), except pure-JavaScript packages whose
// module graph costs more to load than their code: typebox is a few hundred small ES modules, undici about a
// hundred CommonJS files; resolving, reading and linking each file costs every process (about 0.6 CPU-s for
// typebox, 0.1-0.2 for the rest). Bundled, each is one parse. CommonJS code in an ES bundle `require`s the
// built-ins it needs through the `require` that REQUIRE_BANNER defines at the top of every output file.
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
