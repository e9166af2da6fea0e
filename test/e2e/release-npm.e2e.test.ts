/**
 * The npm part of a release, installed as a new user would: `npm run release -- --npm-only` into a
 * temporary folder (the npm packages and the devtool-bin image the CLI package names), then
 * `npm install -g --offline` of the tarballs into an empty prefix, with an empty HOME and npm
 * cache, a registry that does not answer, and a PATH without Go or the checkout
 * (docs/releasing.md, "Installing from the tarballs"). The installed CLI runs, loads its bundled
 * libraries, finds its host programs and names the release's agent image; without its platform
 * package it says so in one line. No cluster.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, relative } from 'node:path';
import { after, before, test } from 'node:test';
import { strFromU8, unzipSync } from 'fflate';
import { executableFormat, executableKind } from '../../scripts/release/headers.ts';
import { PLATFORMS, platformFiles, platformPackage } from '../../scripts/release/manifests.ts';
import { repoRoot } from './cli.ts';

const { version } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
const PLATFORM_PACKAGE = `devtool-${process.platform}-${process.arch}`;
const work = mkdtempSync(join(tmpdir(), 'devtool-release-npm-'));
const release = join(work, 'release');
const npmDir = join(release, 'npm');
/** The registry the release names its images under (scripts/release/registry.sh). */
const RELEASE_REGISTRY = 'registry.example.com/devtool-e2e';

/** A new user's machine: empty HOME and npm cache, no registry, node and npm on PATH but no Go and no checkout. */
function newUser(name: string): { env: NodeJS.ProcessEnv; prefix: string; home: string } {
  const base = join(work, name);
  const home = join(base, 'home');
  const prefix = join(base, 'prefix');
  for (const dir of [home, prefix, join(base, 'npm-cache')]) mkdirSync(dir, { recursive: true });
  const env = {
    PATH: [join(prefix, 'bin'), dirname(process.execPath), '/usr/bin', '/bin'].join(delimiter),
    HOME: home,
    npm_config_cache: join(base, 'npm-cache'),
    // Nothing listens there: a request would fail (and, without --offline, be retried for minutes).
    npm_config_registry: 'http://127.0.0.1:9/',
  };
  return { env, prefix, home };
}

function run(program: string, args: string[], env: NodeJS.ProcessEnv, cwd: string, timeout = 120_000) {
  const r = spawnSync(program, args, { env, cwd, encoding: 'utf8', timeout });
  return { code: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

function ok(r: ReturnType<typeof run>, what: string) {
  assert.equal(r.code, 0, `${what}: exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
}

/** Installs the tarballs named, as docs/releasing.md says. */
function install(user: ReturnType<typeof newUser>, tarballs: string[]) {
  const args = ['install', '-g', '--offline', '--no-update-notifier', '--no-audit', '--no-fund', '--prefix', user.prefix, ...tarballs.map((t) => `./${t}`)];
  ok(run('npm', args, user.env, npmDir, 300_000), `npm ${args.join(' ')}`);
}

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

function doctorMetadata(r: ReturnType<typeof run>): { hostPrograms: Record<string, string>; notCollected: string[] } {
  const zip = unzipSync(readFileSync(r.stdout.trim()));
  return JSON.parse(strFromU8(zip['metadata.json']!));
}

before(
  () => {
    const env = { ...process.env, DEVTOOL_RELEASE_REGISTRY: RELEASE_REGISTRY };
    const r = run(process.execPath, ['--import', 'tsx', 'scripts/release/main.ts', '--npm-only', '--out', release], env, repoRoot, 1_200_000);
    ok(r, 'npm run release -- --npm-only');
  },
  { timeout: 1_200_000 },
);
after(() => rmSync(work, { recursive: true, force: true }));

test('the release: the CLI tarball and one per platform, summed; each program built for its machine', () => {
  const tarballs = readdirSync(npmDir).sort();
  assert.deepEqual(tarballs, [`devtool-${version}.tgz`, ...PLATFORMS.map((p) => `${platformPackage(p)}-${version}.tgz`)].sort());
  const sums = readFileSync(join(release, 'SHA256SUMS'), 'utf8');
  for (const t of tarballs) assert.match(sums, new RegExp(`^[0-9a-f]{64}  npm/${t.replaceAll('.', '\\.')}$`, 'm'));
  assert.ok(statSync(join(npmDir, `devtool-${version}.tgz`)).size < 10 * 2 ** 20, 'the CLI package is under 10 MB');
  assert.deepEqual(readdirSync(join(release, 'images')), [`devtool-bin-${version}.tar`]);
  assert.match(sums, new RegExp(`^[0-9a-f]{64}  images/devtool-bin-${version.replaceAll('.', '\\.')}\\.tar$`, 'm'));

  for (const platform of PLATFORMS) {
    const dir = join(work, 'unpacked', platformPackage(platform));
    mkdirSync(dir, { recursive: true });
    ok(run('tar', ['-xzf', join(npmDir, `${platformPackage(platform)}-${version}.tgz`), '-C', dir], process.env, work), 'tar');
    const manifest = JSON.parse(readFileSync(join(dir, 'package', 'package.json'), 'utf8'));
    assert.deepEqual([manifest.os, manifest.cpu], [[platform.os], [platform.cpu]]);
    for (const file of platformFiles(platform)) {
      const head = readFileSync(join(dir, 'package', file)).subarray(0, 4096);
      assert.deepEqual(executableKind(head), { format: executableFormat(platform.os), arch: platform.cpu }, `${platformPackage(platform)} ${file}`);
    }
  }
});

test('installed from the tarballs with no registry, Go or checkout: the CLI runs and finds its programs', { timeout: 600_000 }, () => {
  const user = newUser('full');
  assert.notEqual(run('sh', ['-c', 'command -v go'], user.env, user.home).code, 0, 'go is on the new user’s PATH');
  install(user, [`devtool-${version}.tgz`, `${PLATFORM_PACKAGE}-${version}.tgz`]);

  const installed = join(user.prefix, 'lib', 'node_modules', 'devtool');
  const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
  assert.equal(manifest.dependencies, undefined);
  assert.deepEqual(manifest.optionalDependencies, Object.fromEntries(PLATFORMS.map((p) => [platformPackage(p), version])));
  assert.equal(manifest.engines.node, '>=20');
  // The devtool-bin image the CLI runs in dev pods: the release's archive, by its index's digest.
  const index = JSON.parse(ok(run('tar', ['-xOf', join(release, 'images', `devtool-bin-${version}.tar`), './index.json'], user.env, work), 'tar').stdout);
  assert.equal(manifest.devtool.agentImage, `${RELEASE_REGISTRY}/devtool-bin:${version}@${index.manifests[0].digest}`);
  assert.match(manifest.devtool.agentImage, /@sha256:[0-9a-f]{64}$/);
  const packaged = files(installed).map((f) => relative(installed, f));
  assert.deepEqual(
    packaged.filter((f) => !f.startsWith('dist/')),
    ['README.md', 'package.json'],
  );
  assert.deepEqual(
    packaged.filter((f) => f.endsWith('.map') || f.endsWith('.node')),
    [],
  );

  const project = join(user.home, 'project');
  mkdirSync(project);
  assert.equal(ok(run('devtool', ['version'], user.env, project), 'version').stdout, `devtool version ${version}\n`);
  assert.match(ok(run('devtool', ['help'], user.env, project), 'help').stdout, /^Usage:$/m);

  // Every bundled library loads from the package alone (ssh2 without its native add-ons).
  const vendor = join(installed, 'dist', 'vendor');
  const probe = `
    const v = (n) => require(${JSON.stringify(vendor)} + '/' + n);
    const out = [typeof v('ssh2.cjs').Client, typeof v('yaml.cjs').parse, typeof v('js-yaml.cjs').load, typeof v('ws.cjs'),
      typeof v('tar-stream.cjs').pack, typeof v('fflate.cjs').zipSync, typeof v('docker-modem.cjs'), typeof v('inquirer-prompts.cjs').input,
      typeof require(${JSON.stringify(join(installed, 'dist', 'kube-client.cjs'))}).KubeConfig];
    Promise.all([import(${JSON.stringify(`${vendor}/open.mjs`)}), import(${JSON.stringify(`${vendor}/kubernetes-client-node-dist-web-socket-handler.mjs`)})])
      .then(([open, ws]) => console.log([...out, typeof open.default, typeof ws.WebSocketHandler].join(' ')));`;
  assert.equal(ok(run(process.execPath, ['-e', probe], user.env, project), 'vendor bundles').stdout.trim(), Array(11).fill('function').join(' '));

  // A command that reads Compose: the shared validator and the YAML libraries, with no cluster.
  writeFileSync(join(project, 'compose.yml'), 'services:\n  web:\n    image: nginx\n');
  assert.match(ok(run('devtool', ['deploy', '--dry-run', '--namespace', 'demo'], user.env, project), 'deploy --dry-run').stdout, /kind: Deployment/);
  writeFileSync(join(project, 'compose.yml'), 'services:\n  web:\n    image: nginx\n    bogus: 1\n');
  assert.match(run('devtool', ['deploy', '--dry-run', '--namespace', 'demo'], user.env, project).stderr, /unknown field "bogus" in services\.web/);

  const doctor = ok(run('devtool', ['doctor'], user.env, project), 'doctor');
  const meta = doctorMetadata(doctor);
  const bin = join(user.prefix, 'lib', 'node_modules', PLATFORM_PACKAGE, 'bin');
  const host = join(bin, 'devtool-host');
  assert.deepEqual(meta.hostPrograms, {
    syncthing: `${host} syncthing`,
    'devtool-agent': `${host} devtool-agent`,
    'devtool-buildkit': `${host} devtool-buildkit`,
  });
  assert.deepEqual(readdirSync(bin), ['devtool-host'], 'one binary for the three programs');
  assert.doesNotMatch(doctor.stderr, /devtool-linux|not installed/);
  assert.match(ok(run(host, ['syncthing', '--version'], user.env, project), 'syncthing --version').stdout, /^syncthing v\S+ .*\[noassets, noquic, noupgrade\]/);
  const agentVersion = new RegExp(`^devtool-agent ${version} `);
  assert.match(ok(run(host, ['devtool-agent', 'version'], user.env, project), 'devtool-agent version').stdout, agentVersion);
  ok(run(host, ['devtool-buildkit', 'version'], user.env, project), 'devtool-buildkit version');
  // Copied under a program's name (as into a dev container), it is that program.
  const copied = join(user.home, 'devtool-agent');
  copyFileSync(host, copied);
  chmodSync(copied, 0o755);
  assert.match(ok(run(copied, ['version'], user.env, project), 'the copy named devtool-agent').stdout, agentVersion);
});

test('installed without its platform package: one line naming the package to install', { timeout: 600_000 }, () => {
  const user = newUser('cli-only');
  install(user, [`devtool-${version}.tgz`]);
  const project = join(user.home, 'project');
  mkdirSync(project);
  const doctor = ok(run('devtool', ['doctor'], user.env, project), 'doctor');
  const missing = doctor.stderr.split('\n').filter((l) => l.includes(PLATFORM_PACKAGE));
  assert.deepEqual(missing, [
    `! not collected: the package ${PLATFORM_PACKAGE}, devtool's programs for this machine, is not installed: install it with devtool ` +
      `(npm install -g devtool-${version}.tgz ${PLATFORM_PACKAGE}-${version}.tgz)`,
  ]);
  assert.deepEqual(Object.values(doctorMetadata(doctor).hostPrograms), ['missing', 'missing', 'missing']);
});
