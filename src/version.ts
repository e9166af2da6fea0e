/**
 * The CLI version. The bundle gets it from package.json at build time (esbuild `define`);
 * running from source (tests) falls back to reading package.json.
 */
import { readFileSync } from 'node:fs';

declare const __DEVTOOL_VERSION__: string | undefined;

function fromPackageJson(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

export const VERSION: string = typeof __DEVTOOL_VERSION__ === 'string' ? __DEVTOOL_VERSION__ : fromPackageJson();
