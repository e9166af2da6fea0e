/**
 * The first run of a new user, for one kind of project: a folder as the user has it, `devtool init
 * -v1` (the guesses, no questions), then exactly the commands init says to run next (`next: devtool
 * deploy, then devtool up`), `up` in the background until ready, a file saved here reaching the dev
 * container, and `down`. The first-run-*.e2e.test.ts files run it per kind and check what each kind
 * leaves in the cluster.
 */
import * as k8s from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { loadManifest } from '../../src/manifest/load.ts';
import type { Manifest } from '../../src/manifest/model.ts';
import { runDevtool } from './cli.ts';
import { ensureDocker } from '../../cluster/test-docker.ts';
import { clusterSandbox, ensureAgentImage, type ClusterSandbox } from './cluster.ts';
import { startUp, type UpSession } from './up-session.ts';

/** Writes a project: path -> content. */
export function writeProject(folder: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(folder, path)), { recursive: true });
    writeFileSync(join(folder, path), text);
  }
}

/**
 * A cluster sandbox for first runs: its environment with the Docker daemon (deploy builds), the
 * agent image, `extra` (e.g. PATH), the test's namespace and the local registry selected.
 */
export async function firstRunSandbox(
  prefix: string,
  extra: NodeJS.ProcessEnv = {},
): Promise<{ s: ClusterSandbox; env: NodeJS.ProcessEnv; apps: k8s.AppsV1Api }> {
  const [{ dockerHost }, s] = await Promise.all([ensureDocker(), clusterSandbox(prefix)]);
  const env = { ...s.env, ...extra, DOCKER_HOST: dockerHost, DEVTOOL_BIN_IMAGE: ensureAgentImage() };
  useNamespace(s, env);
  return { s, env, apps: s.kc.makeApiClient(k8s.AppsV1Api) };
}

/** Selects the test's namespace and the local registry in the sandbox's devtool context. */
export function useNamespace(s: ClusterSandbox, env: NodeJS.ProcessEnv): void {
  const use = runDevtool(['context', 'use', 'devtool-local', '--namespace', s.namespace, '--registry', 'localhost:5000'], { env });
  assert.equal(use.code, 0, use.stderr);
}

export interface FirstRun {
  manifest: Manifest;
  /** What init printed. */
  init: string;
  /** What each command init named printed (stdout and stderr), in order. */
  outputs: string[];
  /** The running `up` (stop it before `down`). */
  up: UpSession;
}

/** init -v1, then the commands its `next:` line names; resolves once `up` is ready. */
export async function firstRun(cwd: string, env: NodeJS.ProcessEnv): Promise<FirstRun> {
  const init = runDevtool(['init', '-v1'], { cwd, env });
  assert.equal(init.code, 0, init.stderr);
  const manifest = loadManifest('devtool.yml', { cwd, env: {} });
  const next = /^ {2}next: (.+)$/m.exec(init.stdout)?.[1];
  assert.ok(next, `init names the next commands:\n${init.stdout}`);
  const commands = next.split(', then ').map((c) => c.trim().split(/\s+/));
  const outputs: string[] = [];
  for (const [devtool, ...args] of commands.slice(0, -1)) {
    assert.equal(devtool, 'devtool');
    const r = runDevtool(args, { cwd, env, timeoutMs: 280_000 });
    assert.equal(r.code, 0, `devtool ${args.join(' ')}:\n${r.stdout}${r.stderr}`);
    outputs.push(r.stdout + r.stderr);
  }
  const [devtool, command, ...upArgs] = commands.at(-1)!;
  assert.deepEqual([devtool, command], ['devtool', 'up'], 'the last step is up');
  const up = await startUp(upArgs, { env, cwd }, 300_000);
  outputs.push(up.output());
  return { manifest, init: init.stdout, outputs, up };
}

/** Saves a file here and waits until the dev container has it in /app (the synced folder). */
export async function assertSyncs(cwd: string, env: NodeJS.ProcessEnv, name = 'saved-here.txt'): Promise<void> {
  const text = `saved at ${Date.now()}\n`;
  writeFileSync(join(cwd, name), text);
  const deadline = Date.now() + 60_000;
  let last = '';
  for (;;) {
    const r = runDevtool(['exec', '--', 'cat', `/app/${name}`], { cwd, env, timeoutMs: 30_000 });
    if (r.code === 0 && r.stdout === text) return;
    last = `${r.code}: ${r.stdout}${r.stderr}`;
    if (Date.now() > deadline) assert.fail(`${name} did not reach /app in the dev container within 60s (last: ${last})`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Everything of dev container `devName` left in the namespace: objects labelled devtool.dev/dev=NAME, and its pods. */
export async function devLeftovers(s: ClusterSandbox, devName: string): Promise<string[]> {
  const ns = s.namespace;
  const apps = s.kc.makeApiClient(k8s.AppsV1Api);
  const labelSelector = `devtool.dev/dev=${devName}`;
  const names = (kind: string, items: { metadata?: { name?: string } }[]) => items.map((i) => `${kind}/${i.metadata?.name}`);
  return [
    ...names('deployment', (await apps.listNamespacedDeployment({ namespace: ns, labelSelector })).items),
    ...names('secret', (await s.core.listNamespacedSecret({ namespace: ns, labelSelector })).items),
    ...names('pvc', (await s.core.listNamespacedPersistentVolumeClaim({ namespace: ns, labelSelector })).items),
    ...names('service', (await s.core.listNamespacedService({ namespace: ns, labelSelector })).items),
    ...names('pod', (await s.core.listNamespacedPod({ namespace: ns, labelSelector: `devtool.dev/dev-pod=${devName}` })).items),
  ];
}

/** `down` (and `down --volumes`): exit 0, and what it printed. */
export function down(cwd: string, env: NodeJS.ProcessEnv, volumes = false): string {
  const r = runDevtool(['down', ...(volumes ? ['--volumes'] : [])], { cwd, env, timeoutMs: 150_000 });
  assert.equal(r.code, 0, `${r.stdout}${r.stderr}`);
  return r.stdout + r.stderr;
}
