/**
 * The local cluster for end-to-end tests: `ensureCluster()` runs `bash cluster/cluster.sh up` (which
 * starts the cluster, or reuses a running healthy one) once per process and returns its admin
 * kubeconfig and the registry that its nodes pull from.
 */
import { spawn, spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface LocalCluster {
  /** Absolute path of a kubeconfig whose current context, `devtool-local`, is cluster admin. */
  kubeconfigPath: string;
  /** Registry host the cluster pulls from over plain HTTP; images are `${registry}/name:tag`. */
  registry: string;
}

export const REGISTRY = 'localhost:5000';
const clusterScript = join(dirname(fileURLToPath(import.meta.url)), 'cluster.sh');

let pending: Promise<LocalCluster> | undefined;

/**
 * Starts (or reuses) the local cluster, once per process, with the nodes it has (one, unless a
 * test added more). The script's output goes to stderr.
 */
export function ensureCluster(): Promise<LocalCluster> {
  pending ??= up(process.env);
  return pending;
}

/**
 * Brings the local cluster to exactly `count` nodes (`DEVTOOL_CLUSTER_NODES=count cluster.sh up`):
 * extra nodes are added, or drained and removed. A test that adds nodes must go back to one in its
 * `after`, whatever happened (`ensureNodes(1)`): other tests expect a single node.
 */
export function ensureNodes(count: number): Promise<LocalCluster> {
  return up({ ...process.env, DEVTOOL_CLUSTER_NODES: String(count) });
}

/** The name of node `n` (1 is the host; extra nodes are `<host>-2`, `<host>-3`...). */
export function nodeName(n: number): string {
  const host = hostname().toLowerCase();
  return n === 1 ? host : `${host}-${n}`;
}

function up(env: NodeJS.ProcessEnv): Promise<LocalCluster> {
  return new Promise((resolve, reject) => {
    // No stdin, nothing interactive; the script's progress is streamed to our stderr.
    const child = spawn('bash', [clusterScript, 'up'], { stdio: ['ignore', 'pipe', 'pipe'], env });
    let stdout = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      stdout += chunk;
      process.stderr.write(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => process.stderr.write(chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code !== 0) {
        reject(new Error(`cluster.sh up failed (exit ${code ?? signal}); its log lines are above`));
        return;
      }
      const kubeconfigPath = stdout.trim().split('\n').pop()?.trim() ?? '';
      if (!kubeconfigPath.startsWith('/')) {
        reject(new Error(`cluster.sh up did not print a kubeconfig path as its last line: ${JSON.stringify(stdout)}`));
        return;
      }
      resolve({ kubeconfigPath, registry: REGISTRY });
    });
  });
}

/**
 * Stops one component of the running cluster (kube-apiserver, kubelet...), as a crash would, or a
 * whole extra node (`nodeName(2)`), as a power cut would, for fault tests; `restartCluster()`
 * starts it again.
 */
export function stopComponent(name: string): void {
  const r = spawnSync('bash', [clusterScript, 'stop', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status !== 0) throw new Error(`cluster.sh stop ${name} failed (exit ${r.status}): ${r.stderr}`);
}

/**
 * `cluster.sh up` again (not once per process like ensureCluster): starts what was stopped, on
 * every node.
 */
export function restartCluster(): void {
  const r = spawnSync('bash', [clusterScript, 'up'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status !== 0) throw new Error(`cluster.sh up failed (exit ${r.status}): ${r.stderr.split('\n').slice(-20).join('\n')}`);
}

/**
 * Runs the cluster's cached `crane` (go-containerregistry's registry client), e.g. to push a test
 * image into the local registry. Throws with crane's stderr when it fails; returns its stdout.
 */
export function crane(args: string[]): string {
  const r = spawnSync('bash', [clusterScript, 'crane', ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status !== 0) throw new Error(`crane ${args.join(' ')} failed (exit ${r.status}): ${r.stderr}`);
  return r.stdout;
}

/** Polls `probe` until it returns a value other than undefined. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 180_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (e) {
      lastError = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${lastError ? `: ${String(lastError)}` : ''}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}
