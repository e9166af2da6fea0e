// Bundles devtool's own code into one CommonJS file, dist/devtool.cjs (the package's bin).
// CommonJS because Node 20 starts a CommonJS entry ~10 ms faster than an ES module one, and
// start-up is a product goal (bench/startup.mjs). The heavy libraries stay external and are
// loaded from node_modules only when a command needs them (every use is behind a dynamic
// import), so `devtool version` never reads them.
import { build } from 'esbuild';
import { chmodSync, readFileSync, rmSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });

await build({
  entryPoints: ['src/main.ts'],
  outfile: 'dist/devtool.cjs',
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  minifySyntax: true,
  define: {
    __DEVTOOL_VERSION__: JSON.stringify(pkg.version),
    // import.meta is empty in CommonJS; give modules that use it their bundle's real URL.
    'import.meta.url': '__devtoolBundleUrl',
  },
  external: Object.keys(pkg.dependencies ?? {}),
  // Keep import() of the external libraries as real dynamic imports.
  supported: { 'dynamic-import': true },
  banner: { js: "#!/usr/bin/env node\n'use strict';\nconst __devtoolBundleUrl = require('node:url').pathToFileURL(__filename).href;" },
  logLevel: 'warning',
});
chmodSync(new URL('../dist/devtool.cjs', import.meta.url), 0o755);
