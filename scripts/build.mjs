// Bundles devtool's own code as CommonJS: dist/devtool.cjs (the package's bin: parser, command
// specs, contexts) and one dist/commands/<name>.cjs per command handler, loaded with import()
// only when that command runs. CommonJS because Node 20 starts a CommonJS entry ~10 ms faster
// than an ES module one; one file per handler so that start-up never parses the code of other
// commands (the Compose validator alone is ~500 KB). Start-up is a product goal: bench/startup.mjs.
// Dependencies stay external and load from node_modules only when a command needs them. Also the
// programs that run in the cluster, self-contained (see the end).
//
// `build.mjs release OUT`: the CLI's bundles alone, into OUT (a release's package, scripts/release/),
// with no source maps and every dependency bundled in, still loaded only when a command needs it:
// each one a file of its own under OUT/vendor/ (vendoredDependencies below).
import { build } from 'esbuild';
import { chmodSync, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { apiAsData } from './api-as-data.mjs';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
// `build.mjs cluster`: the in-cluster programs' bundles alone (scripts/service-up.sh), leaving the
// CLI's bundles in dist/ as they are (a test may be running them).
const clusterOnly = process.argv[2] === 'cluster';
const release = process.argv[2] === 'release';
if (release && !process.argv[3]) throw new Error('usage: node scripts/build.mjs release OUT');
const out = release ? process.argv[3] : 'dist';
if (!clusterOnly) rmSync(out, { recursive: true, force: true });

/**
 * `import('./run.ts')` in src/commands/<name>/spec.ts becomes a require() of that handler's own
 * bundle, `<dir><name>.cjs`, with `dir` relative to the bundle being built (ownBundle below).
 */
const lazyHandlers = (dir) => ({
  name: 'lazy-handlers',
  setup(b) {
    b.onResolve({ filter: /^\.\/run\.ts$/ }, (args) => {
      const m = /src\/commands\/([^/]+)\/spec\.ts$/.exec(args.importer);
      return m ? { path: `${dir}${m[1]}.cjs`, namespace: OWN_BUNDLE } : undefined;
    });
  },
});

/**
 * `import('./service/client.ts')` in src/factory.ts becomes a require() of its own bundle,
 * `<dir>service-client.cjs`: bundled inline, the client (~12 KB) would be parsed by every
 * start-up, though only service commands use it.
 */
const lazyServiceClient = (dir) => ({
  name: 'lazy-service-client',
  setup(b) {
    b.onResolve({ filter: /^\.\/service\/client\.ts$/ }, (args) =>
      /src\/factory\.ts$/.test(args.importer) ? { path: `${dir}service-client.cjs`, namespace: OWN_BUNDLE } : undefined,
    );
  },
});

/**
 * The Compose validator (src/compose/schema/validate.generated.cjs, ~470 KB), built once into
 * `<dir>compose-validate.cjs` and required from there: inline, every command that reads a manifest
 * or a Compose file carried a copy of it (4 MB of a release's 12).
 */
const sharedComposeValidator = (dir) => ({
  name: 'shared-compose-validator',
  setup(b) {
    b.onResolve({ filter: /\/validate\.generated\.cjs$/ }, (args) =>
      args.namespace === OWN_BUNDLE ? undefined : { path: `${dir}compose-validate.cjs`, namespace: OWN_BUNDLE },
    );
  },
});

/**
 * Our own bundles are loaded with require(), not import(): the first import() of a process starts
 * Node's ES module loader and runs its CommonJS export scan on the file, ~12 ms of every command
 * (bench/namespace-list.mjs). The same for yaml (a kubeconfig's reader), which is CommonJS too;
 * the ES-only dependencies (@kubernetes/client-node, the prompts) stay import(). The import() in the source becomes one of a small module inlined
 * here, `module.exports = require('<bundle>')`, evaluated only when that import() runs.
 */
const OWN_BUNDLE = 'own-bundle';
/** Dependencies that ship CommonJS and that the source loads with import(): required the same way. */
const COMMONJS_DEPENDENCIES = /^yaml$/;
const ownBundles = {
  name: 'own-bundles',
  setup(b) {
    b.onResolve({ filter: COMMONJS_DEPENDENCIES }, (args) =>
      args.kind === 'dynamic-import' && args.namespace !== OWN_BUNDLE ? { path: args.path, namespace: OWN_BUNDLE } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: OWN_BUNDLE }, (args) => ({ contents: `module.exports = require(${JSON.stringify(args.path)});`, loader: 'js' }));
    b.onResolve({ filter: /.*/, namespace: OWN_BUNDLE }, (args) => ({ path: args.path, external: true }));
  },
};

/**
 * @kubernetes/client-node, bundled once into `<dir>kube-client.cjs` (built below) and required
 * from there. Loaded from node_modules it is an ES module of some 1,500 files, and Node's ES
 * loader resolves, reads and compiles each one: 0.5 to 0.9 s of every command that talks to a
 * cluster on this project's 2-core machine, against 0.25 to 0.4 s for one minified file
 * (bench/namespace-list.mjs, bench/dev-up.mjs). Type-only imports vanish before this runs.
 */
const KUBE_CLIENT = '@kubernetes/client-node';
const bundledKubeClient = (dir) => ({
  name: 'bundled-kube-client',
  setup(b) {
    b.onResolve({ filter: /^@kubernetes\/client-node$/ }, (args) =>
      args.namespace === OWN_BUNDLE ? undefined : { path: `${dir}kube-client.cjs`, namespace: OWN_BUNDLE },
    );
  },
});

/**
 * In a release, each dependency the CLI's bundles import (a package, or a subpath of one) becomes
 * a bundle of its own, `<dir>vendor/<name>.cjs`, required where today's build requires it from
 * node_modules: loaded as lazily as before, and shared by every command. The packages that ship ES
 * modules only stay ES modules (`<dir>vendor/<name>.mjs`) behind a real import(), so what the
 * source's import() returns is what Node would give (a CommonJS copy of `open` would hand back its
 * namespace as `default`). `used` collects what was vendored, for buildVendored.
 */
const ES_MODULE_ONLY = new Set(['open', '@kubernetes/client-node/dist/web-socket-handler.js']);
const dependencyOf = (spec) => Object.keys(pkg.dependencies ?? {}).find((d) => spec === d || spec.startsWith(`${d}/`));
const vendorFile = (spec) =>
  `vendor/${spec
    .replace(/^@/, '')
    .replace(/\.js$/, '')
    .replace(/[^A-Za-z0-9.-]+/g, '-')}.${ES_MODULE_ONLY.has(spec) ? 'mjs' : 'cjs'}`;
const vendoredDependencies = (dir, used) => ({
  name: 'vendored-dependencies',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.namespace === OWN_BUNDLE || !dependencyOf(args.path)) return undefined;
      used.add(args.path);
      if (!ES_MODULE_ONLY.has(args.path)) return { path: `${dir}${vendorFile(args.path)}`, namespace: OWN_BUNDLE };
      if (args.kind !== 'dynamic-import')
        return { errors: [{ text: `${args.path} ships ES modules only: load it with import(), Node 20 cannot require() it` }] };
      return { path: `${dir}${vendorFile(args.path)}`, external: true };
    });
  },
});

/** The vendor bundles of a release: each dependency in `used`, self-contained and minified. */
async function buildVendored(used) {
  for (const spec of [...used].sort()) {
    const outfile = `${out}/${vendorFile(spec)}`;
    if (ES_MODULE_ONLY.has(spec)) {
      // An ES module bundle has no require(): give the CommonJS code inside it one.
      const banner = "import { createRequire as __devtoolCreateRequire } from 'node:module'; const require = __devtoolCreateRequire(import.meta.url);";
      await build({ ...vendorOptions, entryPoints: [spec], outfile, format: 'esm', banner: { js: banner } });
    } else {
      await build({ ...vendorOptions, stdin: { contents: `module.exports = require(${JSON.stringify(spec)});`, resolveDir: '.', loader: 'js' }, outfile });
    }
  }
}
const vendorOptions = {
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  minify: true,
  // ssh2's native add-ons: ssh2 requires them in a try and falls back to JavaScript.
  external: ['*.node', 'cpu-features'],
  logLevel: 'warning',
};

const handlers = readdirSync('src/commands').filter((d) => existsSync(`src/commands/${d}/run.ts`));

const common = {
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  sourcemap: !release && 'linked',
  minifySyntax: true,
  minifyWhitespace: release,
  define: {
    __DEVTOOL_VERSION__: JSON.stringify(pkg.version),
    // import.meta is empty in CommonJS; give modules that use it their bundle's real URL.
    'import.meta.url': '__devtoolBundleUrl',
  },
  external: release ? [] : Object.keys(pkg.dependencies ?? {}),
  // Keep import() of the external libraries as real dynamic imports.
  supported: { 'dynamic-import': true },
  banner: { js: "#!/usr/bin/env node\n'use strict';\nconst __devtoolBundleUrl = require('node:url').pathToFileURL(__filename).href;" },
  logLevel: 'warning',
};

if (!clusterOnly) await buildCli();

async function buildCli() {
  const used = new Set();
  const vendored = (dir) => (release ? [vendoredDependencies(dir, used)] : []);
  await build({
    ...common,
    entryPoints: ['src/main.ts'],
    outfile: `${out}/devtool.cjs`,
    plugins: [
      lazyHandlers('./commands/'),
      lazyServiceClient('./'),
      bundledKubeClient('./'),
      sharedComposeValidator('./'),
      ...vendored('./'),
      apiAsData,
      ownBundles,
    ],
  });
  await build({
    ...common,
    entryPoints: Object.fromEntries(handlers.map((d) => [`commands/${d}`, `src/commands/${d}/run.ts`])),
    outdir: out,
    outExtension: { '.js': '.cjs' },
    plugins: [lazyHandlers('./'), lazyServiceClient('../'), bundledKubeClient('../'), sharedComposeValidator('../'), ...vendored('../'), apiAsData, ownBundles],
    banner: { js: "'use strict';\nconst __devtoolBundleUrl = require('node:url').pathToFileURL(__filename).href;" },
  });
  await build({
    ...common,
    entryPoints: ['src/service/client.ts'],
    outfile: `${out}/service-client.cjs`,
    plugins: [...vendored('./'), apiAsData, ownBundles],
    banner: { js: "'use strict';\nconst __devtoolBundleUrl = require('node:url').pathToFileURL(__filename).href;" },
  });
  await build({
    ...common,
    entryPoints: ['src/compose/schema/validate.generated.cjs'],
    outfile: `${out}/compose-validate.cjs`,
    plugins: [...vendored('./'), ownBundles],
    banner: { js: "'use strict';" },
  });
  await build({
    ...common,
    stdin: { contents: `module.exports = require(${JSON.stringify(KUBE_CLIENT)});`, resolveDir: '.', loader: 'js' },
    outfile: `${out}/kube-client.cjs`,
    external: release ? vendorOptions.external : Object.keys(pkg.dependencies ?? {}).filter((d) => d !== KUBE_CLIENT),
    minify: true,
    banner: { js: "'use strict';" },
  });
  if (release) await buildVendored(used);
  chmodSync(`${out}/devtool.cjs`, 0o755);
}
// A release's package holds the CLI alone: the in-cluster programs below ship in images.
if (release) process.exit(0);

// The programs that run in the cluster, the ingress controller (ingress/main.ts) and the devtool
// service (server/main.ts): each one self-contained file with its dependencies bundled in, copied
// into its image on top of node:20 (scripts/service-up.sh), so the images need no node_modules and
// the CLI's package does not install the service's libraries. Start-up time does not matter for
// long-running programs. Neither is ever reached from the CLI's bundles.
const selfContained = { ...common, external: [], supported: {} };
await build({
  ...selfContained,
  entryPoints: ['ingress/main.ts'],
  outfile: 'dist/devtool-ingress.cjs',
  banner: { js: "'use strict';\nconst __devtoolBundleUrl = require('node:url').pathToFileURL(__filename).href;" },
});
await build({ ...selfContained, entryPoints: ['server/main.ts'], outfile: 'dist/devtool-service.cjs' });
chmodSync(new URL('../dist/devtool-service.cjs', import.meta.url), 0o755);
// The pipeline runner's devtool (scripts/runner-image.sh): the whole CLI as one self-contained file,
// every handler and library bundled in, so the runner image needs no node_modules. A Job runs one
// command, so the start-up work the CLI's split bundles save does not matter there.
// ssh2's native add-ons (used by `up`, never by deploy) stay out: ssh2 requires them in a try and
// falls back to JavaScript.
await build({ ...selfContained, external: ['*.node'], entryPoints: ['src/main.ts'], outfile: 'dist/devtool-runner.cjs' });
chmodSync(new URL('../dist/devtool-runner.cjs', import.meta.url), 0o755);
