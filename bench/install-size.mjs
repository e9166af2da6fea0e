// Install benchmark of the npm release (docs/releasing.md): the size of the CLI package and of each
// platform package, packed and installed; the time of `npm install -g --offline` of the CLI and
// this machine's package into an empty prefix (median of 3); and the installed CLI's start-up
// (`devtool version`, median of 15) next to the checkout's dist/devtool.cjs. The baseline is what
// `npm pack` of the checkout installed before a release existed: its files plus the production
// dependencies npm fetched for it (measured from node_modules, without a registry). Writes
// bench/results/install-size.json (bench/results.mjs).
// Targets: under 40 MB (40,000,000 bytes) installed on linux-x64 (CLI and platform package), the CLI
// package under 10 MB; checked on the byte counts, the MiB figures beside them are for reading.
//
//   node bench/install-size.mjs [--release DIR]   (DIR: a release already built; default: build one)
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { figure, writeResult } from './results.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const PLATFORMS = ['linux-x64', 'linux-arm64', 'darwin-x64', 'darwin-arm64', 'win32-x64'];
const here = `${process.platform}-${process.arch}`;
const MiB = 2 ** 20;
const mib = (bytes) => Math.round((bytes / MiB) * 10) / 10;

const work = mkdtempSync(join(tmpdir(), 'devtool-bench-install-'));
const releaseArg = process.argv.indexOf('--release');
const release = releaseArg !== -1 ? process.argv[releaseArg + 1] : join(work, 'release');

/** Bytes of the files under `path` (their lengths, as npm counts a package's unpacked size). */
function bytesUnder(path) {
  const s = statSync(path);
  if (!s.isDirectory()) return s.size;
  return readdirSync(path).reduce((sum, name) => sum + bytesUnder(join(path, name)), 0);
}

/** Bytes of a tarball's files once unpacked (`tar -tvzf`'s size column). */
function unpackedBytes(tarball) {
  const listing = execFileSync('tar', ['-tvzf', tarball], { encoding: 'utf8', maxBuffer: 16 << 20 });
  return listing
    .split('\n')
    .filter(Boolean)
    .reduce((sum, line) => sum + Number(line.trim().split(/\s+/)[2]), 0);
}

function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

function timed(program, args, options) {
  const start = process.hrtime.bigint();
  const r = spawnSync(program, args, { encoding: 'utf8', ...options });
  if (r.status !== 0) throw new Error(`${program} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** Installs the tarballs into an empty prefix, as docs/releasing.md says; returns the prefix and the time. */
function install(n) {
  const base = join(work, `install-${n}`);
  for (const dir of ['prefix', 'home', 'cache']) mkdirSync(join(base, dir), { recursive: true });
  const env = {
    PATH: [dirname(process.execPath), '/usr/bin', '/bin'].join(delimiter),
    HOME: join(base, 'home'),
    npm_config_cache: join(base, 'cache'),
    npm_config_registry: 'http://127.0.0.1:9/',
  };
  const args = ['install', '-g', '--offline', '--no-update-notifier', '--no-audit', '--no-fund', '--prefix', join(base, 'prefix')];
  const ms = timed('npm', [...args, `./devtool-${version}.tgz`, `./devtool-${here}-${version}.tgz`], { cwd: join(release, 'npm'), env });
  return { prefix: join(base, 'prefix'), home: join(base, 'home'), ms };
}

/** The checkout's package as `npm pack` made it: its files, and its production dependencies as npm installs them. */
function checkoutInstall() {
  const [packed] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8' }));
  const parseable = execFileSync('npm', ['ls', '--omit=dev', '--all', '--parseable'], { cwd: root, encoding: 'utf8', maxBuffer: 16 << 20 });
  const dependencies = [...new Set(parseable.split('\n').filter((p) => p && p !== root.replace(/\/$/, '')))];
  return { files: packed.unpackedSize, dependencies: dependencies.reduce((sum, d) => sum + bytesUnder(d), 0), count: dependencies.length };
}

try {
  if (releaseArg === -1) {
    execFileSync(process.execPath, ['--import', 'tsx', 'scripts/release/main.ts', '--npm-only', '--out', release], { cwd: root, stdio: 'inherit' });
  }
  const npmDir = join(release, 'npm');
  const cliTarball = statSync(join(npmDir, `devtool-${version}.tgz`)).size;
  const cliInstalled = unpackedBytes(join(npmDir, `devtool-${version}.tgz`));
  const platforms = Object.fromEntries(
    PLATFORMS.map((p) => {
      const tarball = join(npmDir, `devtool-${p}-${version}.tgz`);
      return [p, { tarball: statSync(tarball).size, installed: unpackedBytes(tarball) }];
    }),
  );

  const installs = [1, 2, 3].map(install);
  const installed = installs[0];
  const modules = join(installed.prefix, 'lib', 'node_modules');
  const measuredHere = bytesUnder(join(modules, 'devtool')) + bytesUnder(join(modules, `devtool-${here}`));

  // Start-up: the installed CLI and the checkout's, alternated run by run.
  const env = { PATH: process.env.PATH, HOME: installed.home, DEVTOOL_HOME: join(installed.home, '.devtool'), KUBECONFIG: join(installed.home, 'none') };
  const clis = { installed: join(modules, 'devtool', 'dist', 'devtool.cjs'), checkout: join(root, 'dist', 'devtool.cjs') };
  const startup = { installed: [], checkout: [] };
  for (let i = 0; i < 18; i++) {
    for (const [name, cli] of Object.entries(clis)) {
      const ms = timed(process.execPath, [cli, 'version'], { env, cwd: installed.home });
      if (i >= 3) startup[name].push(ms);
    }
  }

  const before = checkoutInstall();
  const figures = {
    linuxX64Installed: figure(mib(cliInstalled + platforms['linux-x64'].installed), 'MiB'),
    linuxX64InstalledBytes: figure(cliInstalled + platforms['linux-x64'].installed, 'bytes'),
    cliPackageInstalled: figure(mib(cliInstalled), 'MiB'),
    cliPackageInstalledBytes: figure(cliInstalled, 'bytes'),
    cliPackageTarball: figure(mib(cliTarball), 'MiB'),
    installTime: figure(Math.round(median(installs.map((i) => i.ms)) / 100) / 10, 's'),
    versionStartupInstalled: figure(Math.round(median(startup.installed) * 10) / 10, 'ms'),
  };
  for (const p of PLATFORMS.filter((p) => p !== 'linux-x64')) {
    figures[`${p.replace(/-(\w)/, (_, c) => c.toUpperCase())}Installed`] = figure(mib(cliInstalled + platforms[p].installed), 'MiB');
  }
  writeResult({
    bench: 'install-size',
    figures,
    baseline: {
      checkoutPackInstalled: figure(mib(before.files + before.dependencies), 'MiB'),
      checkoutPackFiles: figure(mib(before.files), 'MiB'),
      versionStartupCheckout: figure(Math.round(median(startup.checkout) * 10) / 10, 'ms'),
    },
    targets: [
      { figure: 'linuxX64InstalledBytes', max: 40e6 - 1, text: 'under 40 MB (40,000,000 bytes) installed on linux-x64 (the CLI and its platform package)' },
      { figure: 'cliPackageInstalledBytes', max: 10e6 - 1, text: 'the CLI package under 10 MB (10,000,000 bytes)' },
    ],
    details: {
      platforms: Object.fromEntries(Object.entries(platforms).map(([p, s]) => [p, { tarballMiB: mib(s.tarball), installedMiB: mib(s.installed) }])),
      installedHereMeasuredOnDisk: { platform: here, MiB: mib(measuredHere) },
      installRunsMs: installs.map((i) => Math.round(i.ms)),
      installCommand: `npm install -g --offline --no-update-notifier ./devtool-${version}.tgz ./devtool-${here}-${version}.tgz`,
      checkoutDependencies: before.count,
      startupRuns: startup.installed.length,
    },
  });
} finally {
  rmSync(work, { recursive: true, force: true });
}
