/**
 * `deploy` and `destroy` of a manifest (devtool.yml): the `deploy` commands run in order with
 * `sh -c` from the manifest's folder, their output streamed line by line (prefixed with the
 * command's name), the first failure stopping everything with its exit code; then the Compose
 * files of `deploy.compose`, if any; with --wait, every workload the commands created. Commands
 * reach the cluster through the labelling proxy (label-proxy.ts), so what they create carries the
 * environment label and `destroy` finds it. Dependencies are deployed first (dependencies.ts).
 * The environment's state is recorded in the cluster at each stage.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatDuration } from '../base/duration.ts';
import { DevtoolError } from '../base/errors.ts';
import { commandShell, processTree, type TreeStop } from '../base/platform.ts';
import type { KubeClient } from '../kube/client.ts';
import type { Command, Manifest } from '../manifest/model.ts';
import { builtImageReferences, deployImages } from '../image/deploy-images.ts';
import type { BuildSetup } from '../image/select.ts';
import { SERVICE_LABEL } from '../kube/labels.ts';
import { awaitEnvironmentWorkloads, Deadline, rolloutReader } from './await.ts';
import { deployCompose, ensureNamespace } from './compose-deploy.ts';
import { startLabelProxy } from './label-proxy.ts';
import type { Progress } from './progress.ts';
import type { StoredSecrets } from '../compose/stored-secrets.ts';
import { readEnvironment, recordDeployEnd, writeEnvironment, type EnvironmentRecord } from './state.ts';

export interface ManifestDeployOptions {
  manifest: Manifest;
  environment: string;
  namespace: string;
  contextName: string;
  endpointDomain?: string;
  /** The IngressClass the endpoints' Ingresses name; absent: the cluster's default class. */
  ingressClass?: string;
  /** The user's environment. */
  env: Readonly<NodeJS.ProcessEnv>;
  /**
   * The user's stored secrets: for `${NAME}` in the Compose files of `deploy.compose` only. The
   * manifest's own `${VAR}` and its commands' environment never get them (docs/decisions/0089-stored-secrets-in-compose-only.md).
   */
  storedSecrets?: StoredSecrets;
  /** --var values. */
  variables: Record<string, string>;
  timeoutMs: number;
  wait: boolean;
  /** --build: force building every image. */
  build: boolean;
  /** Where and how images of the `build` section are built (image/select.ts). */
  builds: BuildSetup;
  /** Deploys the manifest's dependencies (environment-deploy.ts): run first, on the clock of their own timeouts. */
  deployDependencies?: () => Promise<void>;
  /** Aborted when the deploy is interrupted: the running command is stopped, the waits end, the record says `interrupted`. */
  signal?: AbortSignal;
}

export async function deployManifest(client: KubeClient, opts: ManifestDeployOptions, progress: Progress, now: () => Date): Promise<void> {
  const { manifest } = opts;
  for (const w of manifest.warnings) progress.warn(w);

  await ensureNamespace(client, progress);
  const record: EnvironmentRecord = {
    name: opts.environment,
    status: 'progressing',
    source: 'manifest',
    manifest: manifest.text,
    variables: opts.variables,
    output: '',
    updated: now().toISOString(),
  };
  await writeEnvironment(client, record);
  try {
    // Dependencies (a clone that fails included) record this environment's failure too.
    await opts.deployDependencies?.();
    // Images missing from the registry (all with --build) are built and pushed before the commands
    // run; their references reach the commands as DEVTOOL_BUILD_<NAME>_* (image/deploy-images.ts).
    const images = await deployImages(manifest, opts.environment, opts.build, opts.builds, progress);
    opts.signal?.throwIfAborted();
    const deadline = Date.now() + opts.timeoutMs;
    await runCommands(client, manifest.deploy.commands, { ...opts, extraEnv: images, deadline, what: 'deploy' }, progress);
    const compose = manifest.deploy.compose;
    if (compose) {
      const extra = compose.endpoints !== undefined ? endpointsFile(compose.endpoints) : undefined;
      try {
        await deployCompose(
          client,
          {
            cwd: manifest.folder,
            files: [...compose.files.map((f) => join(manifest.folder, f)), ...(extra ? [extra.file] : [])],
            environment: opts.environment,
            namespace: opts.namespace,
            ...(opts.endpointDomain ? { endpointDomain: opts.endpointDomain } : {}),
            ...(opts.ingressClass ? { ingressClass: opts.ingressClass } : {}),
            env: { ...opts.env, ...opts.variables, ...images },
            ...(opts.storedSecrets ? { storedSecrets: opts.storedSecrets } : {}),
            timeoutMs: Math.max(1000, deadline - Date.now()),
            wait: opts.wait,
            variables: opts.variables,
            // Objects created by the commands carry the same label: a Compose prune would delete them.
            prune: manifest.deploy.commands.length === 0,
            builds: { setup: opts.builds, force: opts.build },
            ...(opts.signal ? { signal: opts.signal } : {}),
          },
          progress,
          now,
        );
      } finally {
        extra?.remove();
      }
    }
    // --wait: what the commands created (Compose services were awaited by deployCompose).
    if (opts.wait && manifest.deploy.commands.length > 0) {
      await awaitEnvironmentWorkloads(
        rolloutReader(client),
        opts.environment,
        new Deadline(opts.timeoutMs, deadline - opts.timeoutMs, opts.signal),
        progress,
        (labels) => compose !== undefined && SERVICE_LABEL in labels,
        builtImageReferences(images),
      );
    }
  } catch (err) {
    await recordDeployEnd(client, record, { error: err as Error, interrupted: opts.signal?.aborted, output: progress.transcript(), now: now() });
    throw err;
  }
  await recordDeployEnd(client, record, { output: progress.transcript(), now: now() });
}

/**
 * The manifest's `destroy` commands, with the variables of the last deploy (recorded in the
 * cluster, so a destroy from another machine or without --var removes the same external
 * resources). A failure stops the destroy before any cluster object is deleted: retrying is safe.
 */
export async function runDestroyCommands(
  client: KubeClient,
  opts: Omit<ManifestDeployOptions, 'wait' | 'build' | 'builds' | 'variables' | 'endpointDomain' | 'ingressClass'>,
  progress: Progress,
  now: () => Date,
): Promise<void> {
  if (opts.manifest.destroy.length === 0) return;
  const record = await readEnvironment(client, opts.environment);
  const variables = record?.variables ?? {};
  try {
    await runCommands(client, opts.manifest.destroy, { ...opts, variables, extraEnv: {}, deadline: Date.now() + opts.timeoutMs, what: 'destroy' }, progress);
  } catch (err) {
    if (record)
      await writeEnvironment(client, { ...record, status: 'error', error: (err as Error).message, updated: now().toISOString() }).catch(() => undefined);
    throw err;
  }
}

interface RunOptions {
  manifest: Manifest;
  environment: string;
  namespace: string;
  contextName: string;
  env: Readonly<NodeJS.ProcessEnv>;
  variables: Record<string, string>;
  extraEnv: Record<string, string>;
  deadline: number;
  timeoutMs: number;
  what: 'deploy' | 'destroy';
  signal?: AbortSignal | undefined;
}

async function runCommands(client: KubeClient, commands: readonly Command[], opts: RunOptions, progress: Progress): Promise<void> {
  if (commands.length === 0) return;
  const proxy = await startLabelProxy(client.kc, { environment: opts.environment, namespace: opts.namespace, contextName: opts.contextName });
  try {
    const env: NodeJS.ProcessEnv = {
      ...opts.env,
      ...opts.variables,
      ...opts.extraEnv,
      DEVTOOL_NAMESPACE: opts.namespace,
      DEVTOOL_CONTEXT: opts.contextName,
      DEVTOOL_ENV_NAME: opts.environment,
      KUBECONFIG: proxy.kubeconfigPath,
    };
    for (const command of commands) {
      progress.step(`running ${command.name}`);
      const code = await runOne(command, opts.manifest.folder, env, opts.deadline, progress, opts.signal);
      opts.signal?.throwIfAborted();
      if (code === 'timeout')
        throw new DevtoolError(`${opts.what} command "${command.name}" did not finish within ${formatDuration(opts.timeoutMs)} (--timeout); it was stopped`);
      if (code !== 0) throw new DevtoolError(`${opts.what} command "${command.name}" failed with exit code ${code}`);
      progress.done(command.name);
    }
  } finally {
    if (proxy.unlabelled.length)
      progress.warn(`could not label ${proxy.unlabelled.length} request(s), so destroy may miss their objects: ${proxy.unlabelled.slice(0, 3).join(', ')}`);
    await proxy.close();
  }
}

/** Runs one command; its exit code, or 'timeout'. Signals count as 128+N, as shells report them. */
function runOne(
  command: Command,
  cwd: string,
  env: NodeJS.ProcessEnv,
  deadline: number,
  progress: Progress,
  signal: AbortSignal | undefined,
): Promise<number | 'timeout'> {
  return new Promise((resolve, reject) => {
    // The shell's children too are stopped on a timeout (processTree: a process group, or on Windows taskkill /T).
    const shell = commandShell(command.command);
    const tree = processTree();
    const child = spawn(shell.program, shell.args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: tree.detached, windowsHide: true });
    const forward = (stream: NodeJS.ReadableStream) => {
      let partial = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        const lines = (partial + chunk).split('\n');
        partial = lines.pop()!;
        for (const line of lines) progress.output(command.name, line.replace(/\r$/, ''));
      });
      stream.on('end', () => partial && progress.output(command.name, partial));
    };
    forward(child.stdout);
    forward(child.stderr);
    let timedOut = false;
    const stop = () => stopTree(tree.stop(child.pid!), child.pid!);
    const timer = setTimeout(
      () => {
        timedOut = true;
        stop();
      },
      Math.max(0, deadline - Date.now()),
    );
    // Its own process group: the terminal's Ctrl-C does not reach it, so an interrupted deploy stops it.
    signal?.addEventListener('abort', stop);
    child.on('error', (err) => {
      signal?.removeEventListener('abort', stop);
      clearTimeout(timer);
      const missing = (err as NodeJS.ErrnoException).code === 'ENOENT' ? `: ${shell.missing}` : `: ${err.message}`;
      reject(new DevtoolError(`cannot run "${command.name}"${missing}`));
    });
    child.on('close', (code, killedBy) => {
      signal?.removeEventListener('abort', stop);
      clearTimeout(timer);
      if (timedOut) resolve('timeout');
      else resolve(code ?? 128 + (killedBy ? signalNumber(killedBy) : 0));
    });
  });
}

/** Ends a command's process tree: SIGTERM to its process group, or taskkill of the tree (Windows). */
function stopTree(how: TreeStop, pid: number): void {
  if (how.kind === 'taskkill') {
    spawn(how.program, how.args, { stdio: 'ignore', windowsHide: true }).on('error', () => undefined);
    return;
  }
  try {
    process.kill(-pid, how.signal);
  } catch {
    /* already gone */
  }
}

function signalNumber(signal: NodeJS.Signals): number {
  return ({ SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 } as Record<string, number>)[signal] ?? 0;
}

/** deploy.endpoints reach the Compose loader as one more Compose file, merged after the others. */
export function endpointsFile(endpoints: unknown): { file: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'devtool-endpoints-'));
  const file = join(dir, 'devtool-endpoints.compose.yaml');
  // JSON is YAML; the loader validates it like any Compose file.
  writeFileSync(file, JSON.stringify({ endpoints }));
  return { file, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
