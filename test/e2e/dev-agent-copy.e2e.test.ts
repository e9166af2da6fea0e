/**
 * `up` on a cluster that cannot pull the agent's image (docs/agent-delivery.md), in a namespace that
 * enforces Pod Security `restricted` and a context that names no registry: with DEVTOOL_BIN_IMAGE naming an image that does not exist, the agent is copied
 * into a dev image with a shell through the Kubernetes API, an edit syncs, a new dev pod gets its
 * copy while `up` runs, and `down` restores; a dev image without a shell is refused in one line,
 * and the original is given back. With a registry in the context that lacks the image, `up` pushes
 * one made from this install instead.
 */
import * as k8s from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { lines, runDevtool } from './cli.ts';
import { startUp, tearDownDev } from './up-session.ts';
import { waitFor } from './wait.ts';
import { clusterSandbox, REGISTRY, type ClusterSandbox } from './cluster.ts';

/** Nothing is there: the kubelet's pull fails at once. */
const MISSING_AGENT_IMAGE = `${REGISTRY}/nothing/devtool-bin:0`;
/** An image with no shell at all (one static program). */
const NO_SHELL_IMAGE = `${REGISTRY}/pause:devtool`;

let s: ClusterSandbox;
let apps: k8s.AppsV1Api;
const folders: string[] = [];

before(async () => {
  s = await clusterSandbox('dev-agent-copy');
  const ns = await s.core.readNamespace({ name: s.namespace });
  ns.metadata!.labels = { ...ns.metadata!.labels, 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/enforce-version': 'latest' };
  await s.core.replaceNamespace({ name: s.namespace, body: ns });
  apps = s.kc.makeApiClient(k8s.AppsV1Api);
  for (const name of ['api', 'quiet', 'pushed']) {
    await apps.createNamespacedDeployment({
      namespace: s.namespace,
      body: {
        metadata: { name, labels: { app: name } },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: name } },
          template: {
            metadata: { labels: { app: name } },
            spec: {
              securityContext: { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } },
              containers: [
                {
                  name,
                  image: `${REGISTRY}/debian:bookworm`,
                  command: ['sleep', 'infinity'],
                  securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
                },
              ],
            },
          },
        },
      },
    });
  }
});

after(async () => {
  await tearDownDev(s, s?.env ?? {}, folders);
});

/** A project folder whose devtool.yml has one services entry (no volume: the local storage ignores fsGroup, docs/dev-containers.md). */
function project(name: string, extra = ''): string {
  const folder = join(s.root, name);
  mkdirSync(folder);
  writeFileSync(join(folder, 'devtool.yml'), `services:\n  ${name}:\n    sync: [".:/app"]\n    persistentVolume: {enabled: false}\n${extra}`);
  writeFileSync(join(folder, 'from-laptop.txt'), 'laptop\n');
  folders.push(folder);
  return folder;
}

async function readyReplicas(name: string): Promise<number> {
  return (await apps.readNamespacedDeployment({ name, namespace: s.namespace })).status?.readyReplicas ?? 0;
}

test('no registry and an agent image that cannot be pulled: the agent is copied in, an edit syncs, down restores', { timeout: 300_000 }, async () => {
  await waitFor('the original running', async () => (await readyReplicas('api')) === 1, 120_000);
  const before_ = await apps.readNamespacedDeployment({ name: 'api', namespace: s.namespace });
  const folder = project('api');
  const env = { ...s.env, DEVTOOL_BIN_IMAGE: MISSING_AGENT_IMAGE };
  const dev = ([command, ...args]: string[]) => runDevtool([command!, '-n', s.namespace, ...args], { env, cwd: folder, timeoutMs: 120_000 });

  const up = await startUp(['-n', s.namespace], { env, cwd: folder });
  const said = lines(up.output());
  assert.ok(
    said.some((l) => l.includes(`the agent image ${MISSING_AGENT_IMAGE} cannot be pulled (`)),
    up.output(),
  );
  assert.ok(
    said.some((l) => l.endsWith('agent copied into the dev container through the Kubernetes API (no registry)')),
    up.output(),
  );
  assert.match(up.stdout(), /dev container api-devtool is ready/);

  const mirror = await apps.readNamespacedDeployment({ name: 'api-devtool', namespace: s.namespace });
  assert.equal(mirror.spec?.template.spec?.initContainers, undefined, 'no installer image');
  assert.equal(mirror.metadata?.annotations?.['devtool.dev/agent-image-unpulled'], MISSING_AGENT_IMAGE);

  // Synced both ways, as the image's user.
  const first = dev(['exec', '--', 'sh', '-c', 'id -u; cat /app/from-laptop.txt']);
  assert.equal(first.code, 0, first.stderr);
  assert.equal(first.stdout, '1000\nlaptop\n');
  writeFileSync(join(folder, 'edited.txt'), 'an edit\n');
  await waitFor('the edit in the dev container', () => dev(['exec', '--', 'cat', '/app/edited.txt']).stdout === 'an edit\n', 60_000);

  // A new dev pod (this one deleted) waits for its agent too: up's redial copies it in.
  const pods = await s.core.listNamespacedPod({ namespace: s.namespace, labelSelector: 'devtool.dev/dev-pod=api' });
  await s.core.deleteNamespacedPod({ name: pods.items[0]!.metadata!.name!, namespace: s.namespace });
  await waitFor('up reconnected to the new dev pod', () => up.output().includes('reconnected to the dev container'), 120_000);
  writeFileSync(join(folder, 'after.txt'), 'after the new pod\n');
  await waitFor('an edit in the new dev pod', () => dev(['exec', '--', 'cat', '/app/after.txt']).stdout === 'after the new pod\n', 60_000);
  await up.stop();

  const down = dev(['down']);
  assert.equal(down.code, 0, down.stderr);
  assert.deepEqual((await apps.readNamespacedDeployment({ name: 'api', namespace: s.namespace })).spec, before_.spec);
  await waitFor('the original running again', async () => (await readyReplicas('api')) === 1, 120_000);
});

test('no agent image at all and a dev image without a shell: refused in one line naming what to set, the original given back', {
  timeout: 240_000,
}, async () => {
  await waitFor('the original running', async () => (await readyReplicas('quiet')) === 1, 120_000);
  const before_ = await apps.readNamespacedDeployment({ name: 'quiet', namespace: s.namespace });
  const folder = project('quiet', `    image: ${NO_SHELL_IMAGE}\n`);
  const env = { ...s.env };
  delete env.DEVTOOL_BIN_IMAGE;
  const r = runDevtool(['up', '-n', s.namespace], { env, cwd: folder, timeoutMs: 200_000 });
  assert.equal(r.code, 1, r.stderr);
  const errors = lines(r.stderr).filter((l) => l.startsWith('Error:'));
  assert.equal(errors.length, 1, r.stderr);
  const image = NO_SHELL_IMAGE.replace(/[.]/g, '\\.');
  const refusal =
    `^Error: the dev image ${image} has no shell \\(/bin/sh\\), so the agent cannot be copied into it through the Kubernetes API: ` +
    `set DEVTOOL_BIN_IMAGE to a devtool-bin image the cluster can pull, or give the context a registry .*; ` +
    `restored quiet, so nothing this 'up' changed is left$`;
  assert.match(errors[0]!, new RegExp(refusal));
  assert.deepEqual((await apps.readNamespacedDeployment({ name: 'quiet', namespace: s.namespace })).spec, before_.spec);
});

test("a context registry without the agent image: up pushes one made from this install, and the dev pod's installer pulls it", {
  timeout: 300_000,
}, async () => {
  await waitFor('the original running', async () => (await readyReplicas('pushed')) === 1, 120_000);
  const before_ = await apps.readNamespacedDeployment({ name: 'pushed', namespace: s.namespace });
  const folder = project('pushed');
  // A repository of this run's own: nothing is there yet.
  const registry = `${REGISTRY}/e2e-push-${Date.now().toString(36)}`;
  const env = { ...s.env };
  delete env.DEVTOOL_BIN_IMAGE;
  const use = runDevtool(['context', 'use', 'devtool-local', '--registry', registry], { env, cwd: folder });
  assert.equal(use.code, 0, use.stderr);

  const up = await startUp(['-n', s.namespace], { env, cwd: folder });
  const pushed = new RegExp(`the registry had no agent image ${registry}/devtool-bin:\\S+: pushed (${registry}/devtool-bin:\\S+@sha256:[0-9a-f]{64}) `);
  const image = pushed.exec(up.output())?.[1];
  assert.ok(image, up.output());
  assert.doesNotMatch(up.output(), /through the Kubernetes API/);
  const mirror = await apps.readNamespacedDeployment({ name: 'pushed-devtool', namespace: s.namespace });
  assert.equal(mirror.spec?.template.spec?.initContainers?.[0]?.image, image);
  await up.stop();

  const down = runDevtool(['down', '-n', s.namespace], { env, cwd: folder, timeoutMs: 120_000 });
  assert.equal(down.code, 0, down.stderr);
  assert.deepEqual((await apps.readNamespacedDeployment({ name: 'pushed', namespace: s.namespace })).spec, before_.spec);
});
