/**
 * init's guesses over fixture folders: testdata/<case>/ is a project, expected-devtool.yml what
 * `init -v1` writes for it and expected.stignore the `.stignore` (UPDATE_GOLDEN=1 rewrites; review
 * the diff). Every proposal must load.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { assertGolden } from '../../test/golden.ts';
import { loadManifestText } from '../manifest/load.ts';
import { chartName, composeServiceNames, containerImages, deploymentNames, exposedPorts, inspectFolder, isKubernetesManifest } from './inspect.ts';
import {
  appName,
  builtImageReferences,
  defaultAnswers,
  defaultService,
  deployMethods,
  helmRelease,
  nothingToSwap,
  proposedImage,
  proposeManifest,
  renderManifest,
} from './propose.ts';
import { renderStignore } from './ignore.ts';

const testdata = join(import.meta.dirname, 'testdata');

for (const name of readdirSync(testdata).sort()) {
  test(`init -v1 proposal: ${name}`, () => {
    const dir = join(testdata, name);
    const i = inspectFolder(dir);
    const manifest = proposeManifest(i, defaultAnswers(i, appName(i)));
    const text = renderManifest(manifest, 'fixture');
    assertGolden(join(dir, 'expected-devtool.yml'), text);
    assertGolden(join(dir, 'expected.stignore'), renderStignore(i.ecosystems));
    const loaded = loadManifestText(text, join(dir, 'devtool.yml'), { cwd: dir, env: {} });
    assert.equal(Object.keys(loaded.services).length, 1);
  });
}

test('inspection: Dockerfiles shallow first, manifests outside charts and node_modules, language and EXPOSE', () => {
  const node = inspectFolder(join(testdata, 'node-k8s'));
  assert.equal(node.language, 'node');
  assert.deepEqual(node.dockerfiles, [{ path: 'Dockerfile', dir: '.', exposed: [4000] }]);
  assert.deepEqual(node.manifestDirs, ['k8s']);
  const go = inspectFolder(join(testdata, 'helm-go'));
  assert.equal(go.language, 'go');
  assert.deepEqual(go.charts, ['chart']);
  assert.deepEqual(go.manifestDirs, [], 'chart templates are not plain manifests');
  assert.deepEqual(
    go.dockerfiles.map((d) => d.path),
    ['cmd/api/Dockerfile', 'cmd/api/worker.Dockerfile'],
  );
  assert.deepEqual(
    deployMethods(go).map((m) => m.kind),
    ['helm', 'none'],
  );
  const py = inspectFolder(join(testdata, 'compose-python'));
  assert.equal(py.language, 'python');
  assert.deepEqual(py.composeFiles, ['compose.yaml']);
  assert.equal(inspectFolder(join(testdata, 'empty')).language, undefined);
});

test('node_modules, .git and other generated folders are never inspected', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devtool-init-'));
  try {
    for (const skipped of ['node_modules/x', '.git', 'vendor']) {
      mkdirSync(join(dir, skipped), { recursive: true });
      writeFileSync(join(dir, skipped, 'svc.yaml'), 'apiVersion: v1\nkind: Service\n');
      writeFileSync(join(dir, skipped, 'Dockerfile'), 'FROM x\n');
    }
    const i = inspectFolder(dir);
    assert.deepEqual([i.manifestDirs, i.dockerfiles], [[], []]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('EXPOSE parsing and manifest detection', () => {
  assert.deepEqual(exposedPorts('FROM x\nexpose 80 443/tcp $PORT 53/udp\nEXPOSE 80\n'), [80, 443, 53]);
  assert.ok(isKubernetesManifest('---\napiVersion: v1\nkind: ConfigMap\n'));
  assert.ok(!isKubernetesManifest('services:\n  web: {}\n'));
});

test('ecosystems: every marker at the top, not only the first', () => {
  assert.deepEqual(inspectFolder(join(testdata, 'node-k8s')).ecosystems, ['npm']);
  assert.deepEqual(inspectFolder(join(testdata, 'helm-go')).ecosystems, ['go']);
  assert.deepEqual(inspectFolder(join(testdata, 'empty')).ecosystems, []);
});

test('the Deployments of Kubernetes manifests name the dev container; nothing to swap means autocreate and no public image', () => {
  assert.deepEqual(deploymentNames('apiVersion: v1\nkind: Service\nmetadata: {name: s}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n'), [
    'web',
  ]);
  assert.deepEqual(deploymentNames('kind: [unclosed\n'), []);
  // A StatefulSet is swapped as a Deployment is (docs/dev-containers.md, "StatefulSets").
  assert.deepEqual(
    deploymentNames('apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\n---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d}\n'),
    ['db'],
  );
  const k8s = inspectFolder(join(testdata, 'node-k8s'));
  assert.deepEqual(k8s.deployments, ['web']);
  const kubectl = deployMethods(k8s)[0]!;
  assert.equal(defaultService(k8s, kubectl, 'node-k8s'), 'web');
  assert.equal(nothingToSwap(k8s, kubectl), false);
  const none = { kind: 'none' } as const;
  assert.equal(defaultService(k8s, none, 'node-k8s'), 'node-k8s', 'without the manifests, the image names it');
  assert.equal(nothingToSwap(k8s, none), true);
  assert.equal(proposedImage(k8s, { deploy: none, service: 'node-k8s', port: 1 }, 'node-k8s'), undefined, 'up runs the image build.node-k8s builds');
  const empty = inspectFolder(join(testdata, 'empty'));
  assert.equal(proposedImage(empty, defaultAnswers(empty, 'empty'), 'empty'), 'debian:bookworm', 'nothing exists to run: the language image');
  const services = proposeManifest(empty, defaultAnswers(empty, 'empty'), 'empty', 'localhost:5000/debian:bookworm')['services'] as Record<
    string,
    { image?: string }
  >;
  assert.equal(services['empty']!.image, 'localhost:5000/debian:bookworm', "the context registry's copy replaces the public image");
});

test('the dev container beside a Compose file is a Compose service: one that mounts a host folder, else one with a build, else the first', () => {
  assert.deepEqual(composeServiceNames('services:\n  db: {image: pg}\n  w: {build: .}\n  web: {image: x, volumes: ["./src:/app", "data:/d"]}\n'), [
    'web',
    'w',
    'db',
  ]);
  assert.deepEqual(composeServiceNames('services:\n  db: {image: pg}\n  api: {image: x, volumes: [{type: bind, source: ., target: /app}]}\n'), ['api', 'db']);
  assert.deepEqual(composeServiceNames('services:\n  b: {image: x}\n  a: {image: y}\n'), ['b', 'a']);
  assert.deepEqual(composeServiceNames('services: [\n'), []);
});

test("a chart's release and dev container are named after the chart, which names its Deployment after the release", () => {
  const go = inspectFolder(join(testdata, 'helm-go'));
  assert.deepEqual(go.chartNames, { chart: 'backend' });
  const helm = deployMethods(go)[0]!;
  assert.equal(helmRelease(go, 'chart', 'helm-go'), 'backend');
  assert.equal(defaultService(go, helm, 'helm-go'), 'backend', 'not the image (api): up swaps the Deployment the release makes');
  assert.deepEqual(proposeManifest(go, defaultAnswers(go, 'helm-go'))['deploy'], ['helm upgrade --install backend chart']);
  assert.equal(defaultService(go, { kind: 'none' }, 'helm-go'), 'api', 'without the chart, the image names it');
  assert.equal(helmRelease({ ...go, chartNames: {} }, 'chart', 'helm-go'), 'helm-go', 'a chart without a name: the app');
  assert.equal(helmRelease({ ...go, chartNames: { chart: 'My_Chart' } }, 'chart', 'helm-go'), 'my-chart', 'a DNS label, as helm requires');
  assert.deepEqual(chartName('apiVersion: v2\nname: web\n'), ['web']);
  assert.deepEqual(chartName('name: [unclosed\n'), []);
  assert.deepEqual(chartName('apiVersion: v2\n'), []);
});

test('manifests naming an image the build section builds are applied with the built reference in its place', () => {
  assert.deepEqual(
    containerImages(
      'kind: Pod\nspec: {containers: [{image: a}]}\n---\nkind: CronJob\n' +
        'spec: {jobTemplate: {spec: {template: {spec: {initContainers: [{image: b}], containers: [{image: a}]}}}}}\n',
    ),
    ['a', 'b'],
  );
  assert.deepEqual(containerImages('kind: [unclosed\n'), []);
  const i = inspectFolder(join(testdata, 'k8s-built-image'));
  assert.deepEqual(i.manifestFiles, ['k8s/app.yaml', 'k8s/db.yaml']);
  assert.deepEqual([...builtImageReferences(i, 'k8s-built-image')], [['localhost:5000/k8s-built-image:dev', 'k8s-built-image']], 'postgres:16 is not built');
  const other = { ...i, manifestImages: { 'k8s/app.yaml': ['registry.example.com/team/k8s-built-image@sha256:0a', 'other/web:1'] } };
  assert.deepEqual([...builtImageReferences(other, 'k8s-built-image').keys()], ['registry.example.com/team/k8s-built-image@sha256:0a']);
  const plain = inspectFolder(join(testdata, 'node-k8s'));
  assert.deepEqual(proposeManifest(plain, defaultAnswers(plain, 'node-k8s'))['deploy'], ['kubectl apply -f k8s'], 'no built image named: the folder as it is');
});
