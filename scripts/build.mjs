// Bundles the CLI into dist/ with esbuild. Code splitting keeps start-up fast: each command's
// code (and heavy libraries such as @kubernetes/client-node) is a separate chunk loaded only
// when that command runs.
import { build } from 'esbuild';
import { chmodSync, readFileSync, rmSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });

await build({
  entryPoints: { devtool: 'src/main.ts' },
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  minifySyntax: true,
  chunkNames: 'chunks/[name]-[hash]',
  define: { __DEVTOOL_VERSION__: JSON.stringify(pkg.version) },
  // Some dependencies are CommonJS and call require(); give the ESM bundle one.
  banner: {
    js: "#!/usr/bin/env node\nimport { createRequire as __devtoolCreateRequire } from 'node:module';\nconst require = __devtoolCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
chmodSync(new URL('../dist/devtool.js', import.meta.url), 0o755);
