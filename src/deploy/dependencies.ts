/**
 * The manifest's `dependencies`: git repositories deployed before the application when they are
 * not deployed yet (their environment record in the namespace does not say `deployed`), or always
 * with --dependencies. Each is cloned shallowly with the system git into a cache under the devtool
 * home (updated on later runs: fetched and checked out, so the cache is never edited by hand) and
 * deployed by the same code as `devtool deploy` in its folder (environment-deploy.ts), as the
 * environment named like the dependency, in the same namespace. `destroy` never removes them:
 * other applications may depend on them too.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DevtoolError } from '../base/errors.ts';
import type { KubeClient } from '../kube/client.ts';
import type { Dependency, Manifest } from '../manifest/model.ts';
import { sanitizeName } from '../app/name.ts';
import type { Progress } from './progress.ts';
import { readEnvironment } from './state.ts';

/** One `devtool deploy` run, across its nested dependencies. */
export interface DependencyRun {
  /** Environments being deployed, outermost first: a dependency among them is a cycle. */
  readonly path: readonly string[];
  /** Dependencies deployed in this run: one shared by two others is deployed once. */
  readonly deployed: Set<string>;
  /** --dependencies: deploy them (and theirs) even when deployed already. */
  readonly force: boolean;
}

/** Deploys a cloned dependency's folder exactly as `devtool deploy` would (environment-deploy.ts). */
export type DeployFolder = (
  folder: string,
  opts: { file?: string; environment: string; variables: Record<string, string>; wait: boolean; timeoutMs: number; progress: Progress },
  run: DependencyRun,
) => Promise<void>;

export interface DependencyEnv {
  client: KubeClient;
  progress: Progress;
  /** The cache of clones ($DEVTOOL_HOME/dependencies). */
  cacheRoot: string;
  env: Readonly<NodeJS.ProcessEnv>;
}

/** A dependency that depends, through others, on an environment being deployed. Never wrapped. */
export class DependencyCycleError extends DevtoolError {}

export async function deployDependencies(ctx: DependencyEnv, manifest: Manifest, run: DependencyRun, deployFolder: DeployFolder): Promise<void> {
  const { progress } = ctx;
  for (const [name, dep] of Object.entries(manifest.dependencies)) {
    const environment = sanitizeName(name);
    const loop = cycle(run.path, environment);
    if (loop) throw new DependencyCycleError(`dependency cycle: ${loop} (${manifest.file}); remove one of these dependencies`);
    if (run.deployed.has(environment)) continue;
    if (!run.force) {
      const record = await readEnvironment(ctx.client, environment);
      if (record?.status === 'deployed') {
        progress.done(`dependency ${name} is already deployed (environment ${environment}; --dependencies redeploys it)`);
        continue;
      }
    }
    const folder = await fetchRepository(ctx, name, dep, manifest.folder);
    progress.step(`dependency ${name}: deploying environment ${environment}${dep.wait ? ' (waiting until ready)' : ''}`);
    try {
      await deployFolder(
        folder,
        {
          ...(dep.manifest !== undefined ? { file: dep.manifest } : {}),
          environment,
          variables: dep.variables,
          wait: dep.wait,
          timeoutMs: dep.timeoutMs,
          progress: progress.child(name),
        },
        run,
      );
    } catch (err) {
      if (err instanceof DependencyCycleError) throw err;
      const exitCode = err instanceof DevtoolError ? err.exitCode : undefined;
      throw new DevtoolError(`dependency "${name}": ${(err as Error).message}`, exitCode);
    }
    run.deployed.add(environment);
    progress.done(`dependency ${name} deployed`);
  }
}

/** "a -> b -> a" when `environment` is already on the path, else undefined. */
export function cycle(path: readonly string[], environment: string): string | undefined {
  const at = path.indexOf(environment);
  return at < 0 ? undefined : [...path.slice(at), environment].join(' -> ');
}

/**
 * The URL git is given: URLs (scheme://) and scp-like addresses (`git@host:org/repo`) as written;
 * a local path (relative to the manifest's folder, or `~/`) as a file:// URL, for which git
 * makes a real shallow clone (a plain path would be copied whole, ignoring --depth).
 */
export function repositoryUrl(repository: string, manifestFolder: string, home?: string): string {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(repository)) return repository;
  const local = repository.startsWith('~/') && home ? join(home, repository.slice(2)) : resolve(manifestFolder, repository);
  // git reads "host:path" (a colon before any slash) as an ssh address, unless it is a local path.
  if (/^[^/]+:/.test(repository) && !existsSync(local)) return repository;
  return pathToFileURL(local).href;
}

/** The cache folder of a dependency: its name, and a hash of the URL so two projects' "api" differ. */
export function cacheFolder(root: string, name: string, url: string): string {
  return join(root, `${sanitizeName(name) || 'dependency'}-${createHash('sha256').update(url).digest('hex').slice(0, 10)}`);
}

/** git's own reason, in one line: its first `fatal:` or `error:` line, else its last line. */
export function gitReason(stderr: string, code: number): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const line = lines.find((l) => /^(fatal|error):/.test(l)) ?? lines.at(-1);
  return line ? line.replace(/^(fatal|error):\s*/, '') : `git exited with code ${code}`;
}

/** Clones (or updates the cached clone of) a dependency; returns its folder. */
export async function fetchRepository(
  ctx: Pick<DependencyEnv, 'progress' | 'cacheRoot' | 'env'>,
  name: string,
  dep: Dependency,
  manifestFolder: string,
): Promise<string> {
  const url = repositoryUrl(dep.repository, manifestFolder, ctx.env.HOME);
  const dir = cacheFolder(ctx.cacheRoot, name, url);
  const what = `${dep.repository}${dep.branch ? ` (branch ${dep.branch})` : ''}`;
  const run = (args: string[]) => git(args, ctx.env, dep.timeoutMs);
  if (existsSync(join(dir, '.git'))) {
    ctx.progress.step(`dependency ${name}: updating ${what}`);
    const origin = await run(['-C', dir, 'remote', 'get-url', 'origin']);
    if (origin.code === 0 && origin.stdout.trim() === url) {
      const fetched = await run(['-C', dir, 'fetch', '--quiet', '--depth', '1', '--', 'origin', dep.branch ?? 'HEAD']);
      if (fetched.code === 0) {
        const checkout = await run(['-C', dir, 'checkout', '--quiet', '--force', '--detach', 'FETCH_HEAD']);
        const clean = checkout.code === 0 ? await run(['-C', dir, 'clean', '-ffdxq']) : checkout;
        if (clean.code === 0) return dir;
      }
    }
    // Not updatable (another URL, a broken clone, the fetch failed): a fresh clone, which says why if it fails too.
  } else {
    ctx.progress.step(`dependency ${name}: cloning ${what}`);
  }
  mkdirSync(ctx.cacheRoot, { recursive: true });
  const partial = `${dir}.partial-${randomBytes(4).toString('hex')}`;
  const cloned = await run(['clone', '--quiet', '--depth', '1', '--single-branch', ...(dep.branch ? ['--branch', dep.branch] : []), '--', url, partial]);
  if (cloned.code !== 0) {
    rmSync(partial, { recursive: true, force: true });
    throw new DevtoolError(`dependency "${name}": cannot clone ${what}: ${gitReason(cloned.stderr, cloned.code)}`);
  }
  rmSync(dir, { recursive: true, force: true });
  renameSync(partial, dir);
  return dir;
}

interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs git without a terminal: it must fail with a reason, never wait for a password. */
function git(args: string[], env: Readonly<NodeJS.ProcessEnv>, timeoutMs: number): Promise<GitResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('git', args, {
      env: { ...env, GIT_TERMINAL_PROMPT: '0', GCM_INTERACTIVE: 'never', GIT_SSH_COMMAND: env.GIT_SSH_COMMAND ?? 'ssh -o BatchMode=yes' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGTERM');
    }, timeoutMs);
    child.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(
        new DevtoolError(
          err.code === 'ENOENT' ? 'dependencies are cloned with git, which is not installed (or not on PATH)' : `cannot run git: ${err.message}`,
        ),
      );
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (timedOut) stderr = `fatal: git did not finish within ${Math.round(timeoutMs / 1000)}s (the dependency's timeout)\n${stderr}`;
      resolvePromise({ code: code ?? (signal ? 128 : 1), stdout, stderr });
    });
  });
}
