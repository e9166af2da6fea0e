/**
 * What the tests of non-root dev containers share (dev-security, dev-storage): a namespace that
 * enforces a Pod Security level, with a Deployment `api` made from a pod spec and admitted there,
 * and a project folder beside it; the images with a non-root user they run.
 */
import * as k8s from '@kubernetes/client-node';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crane } from '../../cluster/test-cluster.ts';
import { runDevtool, type RunResult } from './cli.ts';
import { clusterSandbox, ensureAgentImage, REGISTRY, type ClusterSandbox } from './cluster.ts';
import { tearDownDev } from './up-session.ts';
import { waitFor } from './wait.ts';

/** A Deployment `api` in a namespace enforcing Pod Security, and the folder `up` runs from. */
export interface LockedDownApp {
  s: ClusterSandbox;
  apps: k8s.AppsV1Api;
  folder: string;
  env: NodeJS.ProcessEnv;
  /** devtool CMD -n NAMESPACE ARGS, from the project folder. */
  dev(args: string[], timeoutMs?: number): RunResult;
}

const made: LockedDownApp[] = [];

/** The `after` of a file that made LockedDownApps: their `up`s stopped, dev containers and namespaces gone. */
export async function tearDownLockedDown(): Promise<void> {
  for (const { s, env, folder } of made) await tearDownDev(s, env, [folder]);
}

/**
 * A namespace (name from `prefix`) enforcing Pod Security `level`, with `api` deployed from `pod`
 * and running, and a project folder holding `manifest` as devtool.yml and from-laptop.txt.
 */
export async function lockedDownApp(prefix: string, level: 'restricted' | 'baseline', pod: k8s.V1PodSpec, manifest: string): Promise<LockedDownApp> {
  const s = await clusterSandbox(prefix);
  const ns = await s.core.readNamespace({ name: s.namespace });
  ns.metadata!.labels = { ...ns.metadata!.labels, 'pod-security.kubernetes.io/enforce': level, 'pod-security.kubernetes.io/enforce-version': 'latest' };
  await s.core.replaceNamespace({ name: s.namespace, body: ns });
  const apps = s.kc.makeApiClient(k8s.AppsV1Api);
  await apps.createNamespacedDeployment({
    namespace: s.namespace,
    body: {
      metadata: { name: 'api', labels: { app: 'api' } },
      spec: { replicas: 1, selector: { matchLabels: { app: 'api' } }, template: { metadata: { labels: { app: 'api' } }, spec: pod } },
    },
  });
  // The original's pods are admitted: the premise of every case.
  await waitFor(
    'the original pod running',
    async () => (await apps.readNamespacedDeployment({ name: 'api', namespace: s.namespace })).status?.readyReplicas === 1,
    120_000,
  );
  const folder = join(s.root, 'project');
  mkdirSync(folder);
  writeFileSync(join(folder, 'devtool.yml'), manifest);
  writeFileSync(join(folder, 'from-laptop.txt'), 'laptop\n');
  const env = { ...s.env, DEVTOOL_BIN_IMAGE: ensureAgentImage() };
  const dev = ([cmd, ...args]: string[], timeoutMs = 60_000) => runDevtool([cmd!, '-n', s.namespace, ...args], { env, cwd: folder, timeoutMs });
  const app = { s, apps, folder, env, dev };
  made.push(app);
  return app;
}

/**
 * debian:bookworm with `USER 1000:1000`: a numeric user the image's /etc/passwd does not know
 * (no name, no home), as many application images ship.
 */
export function uid1000Image(): string {
  const ref = `${REGISTRY}/debian-uid1000:bookworm`;
  try {
    crane(['digest', '--insecure', ref]);
  } catch {
    crane(['mutate', '--insecure', '--user', '1000:1000', `${REGISTRY}/debian:bookworm`, '-t', ref]);
  }
  return ref;
}

/** A container `api` of `image` that sleeps, with `securityContext`. */
export const sleeper = (image: string, securityContext: k8s.V1SecurityContext): k8s.V1Container => ({
  name: 'api',
  image,
  command: ['sleep', 'infinity'],
  securityContext,
});

/** What Pod Security `restricted` asks of a container, besides seccomp and a non-root user. */
export const compliant: k8s.V1SecurityContext = { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } };
