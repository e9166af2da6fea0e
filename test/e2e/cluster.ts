/**
 * Helpers for end-to-end tests on the local cluster: a sandbox whose KUBECONFIG is the cluster's,
 * a throwaway namespace, commands run inside pods, and images made from local files.
 */
import * as k8s from '@kubernetes/client-node';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, existsSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PassThrough } from 'node:stream';
import { crane, ensureCluster, ensureNodes, nodeName, REGISTRY, type LocalCluster } from '../../cluster/test-cluster.ts';
import { createSandbox, type Sandbox } from './cli.ts';
import { waitFor } from './wait.ts';

// A file that adds nodes (ensureNodes(2)) goes back to one in its `after`, whatever happened.
export { ensureNodes, nodeName, REGISTRY };

export interface ClusterSandbox extends Sandbox {
  cluster: LocalCluster;
  kc: k8s.KubeConfig;
  core: k8s.CoreV1Api;
  namespace: string;
}

/** A CLI sandbox on the local cluster, with a fresh namespace selected in the devtool context. */
/** On every namespace a test makes: scripts/test.sh deletes those an interrupted run left. */
export const E2E_NAMESPACE_LABEL = 'devtool.dev/e2e';

export async function clusterSandbox(prefix: string): Promise<ClusterSandbox> {
  const cluster = await ensureCluster();
  const sandbox = createSandbox(readFileSync(cluster.kubeconfigPath, 'utf8'));
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(cluster.kubeconfigPath);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const namespace = `${prefix}-${Date.now().toString(36)}`;
  // Labelled so that the next run deletes it if this one is cut off before its `after` (scripts/test.sh).
  await core.createNamespace({ body: { metadata: { name: namespace, labels: { [E2E_NAMESPACE_LABEL]: 'true' } } } });
  return { ...sandbox, cluster, kc, core, namespace };
}

export async function deleteNamespace(s: ClusterSandbox): Promise<void> {
  await s.core.deleteNamespace({ name: s.namespace }).catch(() => undefined);
}

/**
 * Creates a ResourceQuota in the sandbox's namespace and resolves once the quota controller has
 * counted it: until its status says its hard limits, admission refuses every object it covers.
 */
export async function createQuota(s: ClusterSandbox, name: string, hard: Record<string, string>): Promise<void> {
  await s.core.createNamespacedResourceQuota({ namespace: s.namespace, body: { metadata: { name }, spec: { hard } } });
  await waitFor(
    `quota ${name} to be counted`,
    async () => {
      const q = await s.core.readNamespacedResourceQuota({ name, namespace: s.namespace });
      return Object.keys(hard).every((k) => q.status?.hard?.[k] !== undefined && q.status.used?.[k] !== undefined);
    },
    30_000,
  );
}

/**
 * Creates a Deployment `name` (label app=name) whose one container sleeps: what a dev container
 * replaces in tests that need no server of its own.
 */
export async function createSleepingDeployment(s: ClusterSandbox, name: string, image = `${REGISTRY}/debian:bookworm`): Promise<void> {
  await s.kc.makeApiClient(k8s.AppsV1Api).createNamespacedDeployment({
    namespace: s.namespace,
    body: {
      metadata: { name },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: name } },
        template: { metadata: { labels: { app: name } }, spec: { containers: [{ name, image, command: ['sleep', 'infinity'] }] } },
      },
    },
  });
}

/** Runs a command in a pod's container; returns its output and exit code. */
export async function execInPod(
  kc: k8s.KubeConfig,
  namespace: string,
  pod: string,
  command: string[],
  container?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const exec = new k8s.Exec(kc);
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  const status = await new Promise<k8s.V1Status>((resolve, reject) => {
    exec.exec(namespace, pod, container ?? '', command, stdout, stderr, null, false, (s) => resolve(s)).catch(reject);
  });
  const code = status.status === 'Success' ? 0 : Number(status.details?.causes?.find((c) => c.reason === 'ExitCode')?.message ?? 1);
  return { code, stdout: out, stderr: err };
}

/** The name of a running pod matching the selector. */
export async function runningPod(core: k8s.CoreV1Api, namespace: string, labelSelector: string): Promise<string> {
  const pods = await core.listNamespacedPod({ namespace, labelSelector });
  const pod = pods.items.find((p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp);
  if (!pod) throw new Error(`no running pod for ${labelSelector} in ${namespace}`);
  return pod.metadata!.name!;
}

/**
 * Builds an image from a local folder: the folder becomes /app in a layer on top of `base`, pushed
 * to the local registry under a tag derived from the content (so reruns reuse it). `npm` packages
 * listed are installed into /app/node_modules first (from the npm registry, cached by version).
 */
export function imageFromFolder(name: string, folder: string, base: string, npmPackages: string[] = []): string {
  const hash = createHash('sha256')
    .update(JSON.stringify([base, npmPackages]))
    .update(readFileSync(join(folder, 'server.js')))
    .digest('hex')
    .slice(0, 12);
  const ref = `${REGISTRY}/${name}:${hash}`;
  try {
    crane(['digest', '--insecure', ref]);
    return ref;
  } catch {
    // not pushed yet: build it
  }
  const work = mkdtempSync(join(tmpdir(), 'devtool-image-'));
  const app = join(work, 'app');
  mkdirSync(app);
  cpSync(folder, app, { recursive: true });
  if (npmPackages.length) {
    const r = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--omit=dev', '--prefix', app, ...npmPackages], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`npm install ${npmPackages.join(' ')} failed: ${r.stderr}`);
  }
  const layer = join(work, 'layer.tar');
  const tar = spawnSync('tar', ['-C', work, '--owner=0', '--group=0', '-cf', layer, 'app'], { encoding: 'utf8' });
  if (tar.status !== 0 || !existsSync(layer)) throw new Error(`tar failed: ${tar.stderr}`);
  crane(['append', '--insecure', '-b', base, '-f', layer, '-t', ref]);
  return ref;
}

let agentImage: string | undefined;

/**
 * The devtool-bin image (agent + Syncthing) of this version, built and pushed to the local
 * registry by agent/build.sh: cached, so instant after the first build; needed again after
 * `cluster:down`, which empties the registry.
 */
export function ensureAgentImage(): string {
  if (agentImage) return agentImage;
  const root = new URL('../..', import.meta.url).pathname;
  // DEVTOOL_E2E_BIN_REGISTRY (e.g. localhost:5000/mine) pushes this tree's agent into a repository
  // of its own, leaving the shared localhost:5000/devtool-bin as other checkouts' tests left it.
  const registry = process.env.DEVTOOL_E2E_BIN_REGISTRY || REGISTRY;
  const r = spawnSync('bash', [join(root, 'agent/build.sh'), registry], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status !== 0) throw new Error(`agent/build.sh failed (exit ${r.status}):\n${r.stdout}${r.stderr}`);
  // The pushed reference with its digest: the node's image cache keeps tags, and a tag reused
  // across agent changes would start yesterday's agent.
  agentImage = r.stdout.trim().split('\n').at(-1)!;
  if (!/@sha256:[0-9a-f]{64}$/.test(agentImage)) throw new Error(`agent/build.sh printed no digest reference: ${r.stdout}`);
  return agentImage;
}

let helmDir: string | undefined;

/**
 * A PATH (the tests' own, `path` by default) with the project's helm in front: cluster/helm.sh
 * builds it from the Go module proxy at a pinned release (cached outside the clone; minutes the
 * first time, scripts/test.sh builds it before the tests). devtool finds helm on the user's PATH as
 * any deploy command does: a test puts it there, the CLI knows nothing of this build.
 */
export function pathWithHelm(path = process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin'): string {
  if (!helmDir) {
    const root = new URL('../..', import.meta.url).pathname;
    const r = spawnSync('bash', [join(root, 'cluster/helm.sh'), 'path'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    if (r.status !== 0) throw new Error(`cluster/helm.sh path failed (exit ${r.status}):\n${r.stdout}${r.stderr}`);
    helmDir = dirname(r.stdout.trim().split('\n').at(-1)!);
  }
  return `${helmDir}:${path}`;
}
