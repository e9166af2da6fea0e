/**
 * The first run from `init`, for the kinds of project that deploy a Deployment of their own, which
 * `up` swaps: Kubernetes manifests (init names the dev container after their Deployment
 * and proposes `kubectl apply`), a Compose file, and a Helm chart (helm: the project's build,
 * cluster/helm.sh, put on the CLI's PATH). init writes no image and no autocreate: the dev container
 * runs the original's image, and a wrong name stays an error. After `down` the original runs again
 * and no dev object is left.
 */
import type * as k8s from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { runDevtool } from './cli.ts';
import { pathWithHelm, REGISTRY, type ClusterSandbox } from './cluster.ts';
import { assertSyncs, devLeftovers, down, firstRun, firstRunSandbox, writeProject } from './first-run.ts';
import { tearDownDev } from './up-session.ts';

let s: ClusterSandbox;
let env: NodeJS.ProcessEnv;
let apps: k8s.AppsV1Api;
const folders: string[] = [];

before(async () => {
  // helm on the PATH, as a user's: the chart's deploy command runs it (built here on a cold machine).
  ({ s, env, apps } = await firstRunSandbox('first-run-b', { PATH: pathWithHelm() }));
});

after(() => tearDownDev(s, env, folders));

const dockerfile = (port: number) => `FROM ${REGISTRY}/debian:bookworm\nCOPY . /srv/\nEXPOSE ${port}\nCMD ["sleep", "infinity"]\n`;
const deployment = (name: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
spec:
  replicas: 1
  selector:
    matchLabels: {app: ${name}}
  template:
    metadata:
      labels: {app: ${name}}
    spec:
      containers:
        - name: ${name}
          image: ${REGISTRY}/debian:bookworm
          command: [sleep, infinity]
`;

/** The first run, then checks shared by the kinds: the original swapped, a file synced, down restoring it. */
async function swapRun(cwd: string, devName: string): Promise<{ image: string }> {
  folders.push(cwd);
  const run = await firstRun(cwd, env);
  assert.deepEqual(Object.keys(run.manifest.services), [devName], run.init);
  const dev = run.manifest.services[devName]!;
  assert.equal(dev.autocreate, false, 'the deploy makes the Deployment to swap: a wrong name must stay an error');
  assert.equal(dev.image, undefined, "no public image: the original's");
  assert.match(run.init, /next: devtool deploy, then devtool up/);
  const original = await apps.readNamespacedDeployment({ name: devName, namespace: s.namespace });
  assert.equal(original.spec?.replicas, 0, 'swapped');
  const mirror = await apps.readNamespacedDeployment({ name: `${devName}-devtool`, namespace: s.namespace });
  const image = mirror.spec!.template.spec!.containers[0]!.image!;
  assert.equal(image, original.spec!.template.spec!.containers[0]!.image, "the dev container runs the original's image");
  await assertSyncs(cwd, env);
  await run.up.stop();
  down(cwd, env, true);
  assert.equal((await apps.readNamespacedDeployment({ name: devName, namespace: s.namespace })).spec?.replicas, 1, 'down restores the original');
  assert.deepEqual(await devLeftovers(s, devName), [], 'nothing of dev mode is left');
  return { image };
}

test('Kubernetes manifests: init proposes kubectl apply and the Deployment they define; deploy, up swaps it, down restores it', {
  timeout: 300_000,
}, async () => {
  const cwd = join(s.root, 'k8sapp');
  writeProject(cwd, { Dockerfile: dockerfile(18741), 'hello.sh': 'echo hello\n', 'k8s/deployment.yaml': deployment('hello') });
  const { image } = await swapRun(cwd, 'hello');
  assert.equal(image, `${REGISTRY}/debian:bookworm`);

  // A name that matches no Deployment (a typo) is still an error without autocreate, naming the fixes; nothing is created.
  writeProject(cwd, { 'typo.yml': 'services:\n  helo:\n    sync: [".:/app"]\n' });
  // It ends with its error: it once waited out the local Syncthing's 30 s start timeout first.
  const typo = runDevtool(['up', '--file', 'typo.yml'], { cwd, env, timeoutMs: 20_000 });
  assert.equal(typo.timedOut, false, `up still ran 20 s after its error: ${typo.stderr}`);
  assert.equal(typo.code, 1, typo.stderr);
  assert.match(
    typo.stderr,
    /no Deployment or StatefulSet named "helo" in namespace \S+: .*or set services\.helo\.autocreate: true for a standalone dev container/,
  );
  assert.deepEqual(await devLeftovers(s, 'helo'), []);
});

test('a Compose file: deploy builds and deploys it, up swaps the service for the dev container, down restores it', { timeout: 300_000 }, async () => {
  // The dev container is named after the folder (init's guess from the Dockerfile), here also the Compose service's name.
  const cwd = join(s.root, 'web');
  writeProject(cwd, {
    Dockerfile: dockerfile(18742),
    'run-id': `${Date.now()}\n`,
    'compose.yaml': 'services:\n  web:\n    build: .\n    command: [sleep, infinity]\n',
  });
  const { image } = await swapRun(cwd, 'web');
  assert.match(image, new RegExp(`^${REGISTRY}/web-web:devtool-[0-9a-f]{24}$`), 'the image the Compose deploy built');
});

// The fullname helper of `helm create`: the release's name when it holds the chart's, else "<release>-<chart>".
const fullnameHelper = `{{- define "api.fullname" -}}
{{- if contains .Chart.Name .Release.Name }}{{ .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}{{ printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}{{ end }}
{{- end }}
`;

test('a Helm chart: deploy installs it, up swaps its Deployment, down restores it', { timeout: 300_000 }, async () => {
  // The chart is not named like the folder or the image (chartapp): the release, and so its Deployment, is named after the chart.
  const cwd = join(s.root, 'chartapp');
  writeProject(cwd, {
    Dockerfile: dockerfile(18743),
    'chart/Chart.yaml': 'apiVersion: v2\nname: api\nversion: 0.1.0\n',
    'chart/templates/_helpers.tpl': fullnameHelper,
    'chart/templates/deployment.yaml': deployment('{{ include "api.fullname" . }}'),
  });
  await swapRun(cwd, 'api');
  const releases = spawnSync('helm', ['list', '--short', '--namespace', s.namespace], { encoding: 'utf8', env: { ...process.env, ...env } });
  assert.equal(releases.stdout.trim(), 'api', releases.stderr);
});
