/**
 * `npm run release [-- --npm-only] [-- --push] [-- --out DIR]`: writes a release of this checkout
 * under release/, or DIR (docs/releasing.md):
 *   release/images/   the OCI image archives, by `images.sh OUT_DIR` (in this folder)
 *   release/npm/      the CLI package and one package per platform (npm.ts); the CLI package names
 *                     the devtool-bin image of release/images by digest, so that image comes first
 *   release/chart/    the packaged Helm chart, by `chart.sh OUT_DIR` (in this folder)
 *   release/SHA256SUMS
 * --npm-only builds the devtool-bin image alone (the CLI package names it; FROM scratch, its
 * programs the Linux platform packages' builds) and no chart; --push then pushes the images to
 * DEVTOOL_RELEASE_REGISTRY (`images.sh push OUT_DIR`), once everything else is written.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { layoutIndexDigest, releaseImageReference, releaseRegistry } from './image-ref.ts';
import { sha256Sums } from './manifests.ts';
import { buildNpmPackages } from './npm.ts';

const USAGE = 'usage: npm run release [-- --npm-only] [-- --push] [-- --out DIR]';
const { values } = (() => {
  try {
    return parseArgs({ options: { 'npm-only': { type: 'boolean' }, push: { type: 'boolean' }, out: { type: 'string' } } });
  } catch (err) {
    process.stderr.write(`release: ${(err as Error).message}; ${USAGE}\n`);
    process.exit(2);
  }
})();
const npmOnly = values['npm-only'] === true;
const push = values.push === true;
if (npmOnly && push) {
  process.stderr.write(`release: --push pushes images, which --npm-only leaves out; ${USAGE}\n`);
  process.exit(2);
}

const root = fileURLToPath(new URL('../..', import.meta.url));
const release = resolve(values.out ?? join(root, 'release'));
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
// registry.sh holds the default, for the shell scripts and this one alike.
const registry = (() => {
  const value = execFileSync('bash', ['-c', 'source "$0" && printf %s "$RELEASE_REGISTRY"', join(root, 'scripts/release/registry.sh')], { encoding: 'utf8' });
  try {
    return releaseRegistry(value, 'DEVTOOL_RELEASE_REGISTRY');
  } catch (err) {
    process.stderr.write(`release: ${(err as Error).message}\n`);
    process.exit(2);
  }
})();
// The folder is emptied first: refuse one that holds anything but an earlier release.
const earlier = existsSync(release) ? readdirSync(release).filter((name) => !['npm', 'images', 'chart', 'SHA256SUMS', '.stage'].includes(name)) : [];
if (earlier.length > 0) {
  process.stderr.write(`release: ${release} holds ${earlier[0]}, which is not part of a release: name an empty or new folder\n`);
  process.exit(2);
}
rmSync(release, { recursive: true, force: true });

releaseScript('images.sh', release, ...(npmOnly ? ['devtool-bin'] : []));
buildNpmPackages(root, release, { agentImage: agentImage() });
if (!npmOnly) releaseScript('chart.sh', release);

const files = listFiles(release).map((path) => ({ path: relative(release, path), sha256: createHash('sha256').update(readFileSync(path)).digest('hex') }));
writeFileSync(join(release, 'SHA256SUMS'), sha256Sums(files));
process.stderr.write(`release: ${files.length} files and SHA256SUMS in ${release}\n`);
if (push) releaseScript('images.sh', 'push', release);

/** Runs a script of scripts/release/ in the checkout, its output to ours; a failure ends the release in one line. */
function releaseScript(script: string, ...args: string[]): void {
  try {
    execFileSync('bash', [join(root, 'scripts/release', script), ...args], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
  } catch (err) {
    const code = (err as { status?: number | null }).status ?? 1;
    process.stderr.write(`release: scripts/release/${script} ${args.join(' ')} failed (exit ${code})\n`);
    process.exit(1);
  }
}

/** The release's devtool-bin image, by the digest of its archive's index. */
function agentImage(): string {
  const archive = join(release, 'images', `devtool-bin-${version}.tar`);
  const indexJson = execFileSync('tar', ['-xOf', archive, './index.json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    return releaseImageReference(registry, 'devtool-bin', version, layoutIndexDigest(indexJson, version, archive));
  } catch (err) {
    process.stderr.write(`release: ${(err as Error).message}\n`);
    process.exit(1);
  }
}

function listFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? listFiles(path) : [path];
  });
}
