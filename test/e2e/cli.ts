/**
 * Runs the built CLI as a user would: `node dist/devtool.cjs ...` in a child process, with a
 * temporary HOME, DEVTOOL_HOME and KUBECONFIG (a fixture file with two fake clusters; nothing is
 * ever contacted), and an environment that carries nothing of the user running the tests.
 * dist/ is built once per test process when it is missing or older than the sources.
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
export const cliPath = join(repoRoot, 'dist', 'devtool.cjs');

/** The fixture kubeconfig: two clusters and contexts with fake servers and tokens; alpha is current. */
export const FIXTURE_KUBECONFIG = readFileSync(join(repoRoot, 'src/context/testdata/two-clusters.kubeconfig.yaml'), 'utf8');

let built = false;

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/** Builds dist/ when it is missing or older than src/, server/, package.json or the build script. */
export function ensureBuilt(): void {
  if (built) return;
  const inputs = Math.max(
    newestSource(join(repoRoot, 'src')),
    newestSource(join(repoRoot, 'server')),
    statSync(join(repoRoot, 'package.json')).mtimeMs,
    statSync(join(repoRoot, 'scripts', 'build.mjs')).mtimeMs,
  );
  if (!existsSync(cliPath) || statSync(cliPath).mtimeMs < inputs) {
    const r = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: repoRoot, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`build failed:\n${r.stdout}${r.stderr}`);
  }
  built = true;
}

const sandboxes: string[] = [];
// DEVTOOL_E2E_KEEP=1 keeps them (the devtool home with devtool.log, the projects) to look at a failure.
process.on('exit', () => {
  if (process.env.DEVTOOL_E2E_KEEP === '1') return void console.error(`kept the sandboxes: ${sandboxes.join(' ')}`);
  for (const dir of sandboxes) rmSync(dir, { recursive: true, force: true });
});

export interface Sandbox {
  root: string;
  /** HOME of the CLI process (never the real one). */
  home: string;
  /** DEVTOOL_HOME: contexts.json, analytics, devtool.log. */
  devtoolHome: string;
  /** The fixture kubeconfig file (KUBECONFIG). */
  kubeconfig: string;
  env: NodeJS.ProcessEnv;
}

/** A fresh temporary HOME, DEVTOOL_HOME and KUBECONFIG fixture. */
export function createSandbox(kubeconfig = FIXTURE_KUBECONFIG): Sandbox {
  const root = mkdtempSync(join(tmpdir(), 'devtool-e2e-'));
  sandboxes.push(root);
  const home = join(root, 'home');
  const devtoolHome = join(root, 'devtool-home');
  const kc = join(root, 'kubeconfig.yaml');
  mkdirSync(home);
  writeFileSync(kc, kubeconfig, { mode: 0o600 });
  return { root, home, devtoolHome, kubeconfig: kc, env: { HOME: home, DEVTOOL_HOME: devtoolHome, KUBECONFIG: kc } };
}

let defaultSandbox: Sandbox | undefined;

/** Only what a process needs: nothing of the user's devtool, kubectl or node settings leaks in. */
function baseEnv(): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8', TZ: 'UTC' };
}

export interface RunOptions {
  /** Added to (and overriding) the sandbox environment; defaults to a shared sandbox. */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Written to stdin, which is then closed (stdin is never a terminal). */
  input?: string;
  timeoutMs?: number;
}

export interface RunResult {
  /** The exit code, or null when the process was killed (timeout). */
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

function envFor(opts: RunOptions): NodeJS.ProcessEnv {
  let env = opts.env;
  if (env === undefined) {
    defaultSandbox ??= createSandbox();
    env = defaultSandbox.env;
  }
  return { ...baseEnv(), ...env };
}

/** Runs `devtool ...args` (the built bundle) and waits for it. */
export function runDevtool(args: readonly string[], opts: RunOptions = {}): RunResult {
  ensureBuilt();
  const env = envFor(opts);
  const r = spawnSync(process.execPath, [cliPath, ...args], {
    env,
    cwd: opts.cwd ?? env.HOME,
    input: opts.input ?? '',
    encoding: 'utf8',
    timeout: opts.timeoutMs ?? 15_000,
    killSignal: 'SIGKILL',
  });
  const timedOut = (r.error as NodeJS.ErrnoException | undefined)?.code === 'ETIMEDOUT';
  if (r.error && !timedOut) throw r.error;
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, timedOut };
}

/** Starts `devtool ...args` without waiting (stdin stays open until the caller ends it). */
export function spawnDevtool(
  args: readonly string[],
  opts: Omit<RunOptions, 'input' | 'timeoutMs'> & { /** In a process group of its own (to signal it and its children at once). */ detached?: boolean } = {},
): ChildProcessWithoutNullStreams {
  ensureBuilt();
  const env = envFor(opts);
  return spawn(process.execPath, [cliPath, ...args], { env, cwd: opts.cwd ?? env.HOME, stdio: 'pipe', detached: opts.detached ?? false });
}

/** Lines of an output, without the final newline. */
export function lines(text: string): string[] {
  return text.split('\n').filter((l, i, all) => !(l === '' && i === all.length - 1));
}
