// scripts/bundle-externals.mjs: the esbuild plugin both builds use (scripts/build.mjs for dist/,
// scripts/build-tests.mjs for the test run). npm packages stay external (native modules load from
// node_modules as usual), except ES-module packages whose module graph costs more to load than their code:
// typebox is a few hundred small ES modules (about half a CPU-second to resolve and link in every
// process); bundled, it is one parse. CommonJS packages such as undici stay external: an ES bundle cannot
// `require` the built-ins they need.
const BUNDLED_PACKAGES = /^(typebox|eventsource-parser)(\/|$)/;

export const externals = {
  name: 'externals',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('node:') || !BUNDLED_PACKAGES.test(args.path)) return { path: args.path, external: true };
      return undefined;
    });
  },
};
