import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadManifestText } from '../manifest/load.ts';
import { buildDevObjects } from './mirror.ts';
import { DEV_POD_LABEL, ORIGINAL_ANNOTATION } from './names.ts';
import { buildEntryFor, standaloneOriginal } from './standalone.ts';

const manifest = (text: string) => loadManifestText(text, '/p/devtool.yml', { cwd: '/p', env: {} });

test('the image of a standalone dev container: the build entry named like it, else the only one, else none', () => {
  assert.equal(buildEntryFor(manifest('build:\n  api: {}\n  web: {}\n'), 'web'), 'web');
  assert.equal(buildEntryFor(manifest('build:\n  myapp: {}\n'), 'dev'), 'myapp');
  assert.equal(buildEntryFor(manifest('build:\n  api: {}\n  web: {}\n'), 'dev'), undefined, 'which of two is a guess: the manifest must say');
  assert.equal(buildEntryFor(manifest('name: x\n'), 'dev'), undefined);
});

test('a standalone dev Deployment is a dev container of an original that exists only in memory', () => {
  const m = manifest('services:\n  my_app:\n    sync: [".:/app"]\n    autocreate: true\n');
  const original = standaloneOriginal('my_app', 'localhost:5000/shop-my_app:devtool-0123');
  assert.equal(original.spec?.replicas, 0);
  const o = buildDevObjects({
    original,
    devName: 'my_app',
    dev: m.services['my_app']!,
    environment: 'shop',
    extraEnv: {},
    agentImage: 'localhost:5000/devtool-bin:0.1.0',
    folder: '0123456789abcdef',
    devtoolVersion: '0.1.0',
    hostPrivateKey: 'HOST',
    clientPublicKey: 'CLIENT',
  });
  const d = o.deployment;
  assert.equal(d.metadata.name, 'my_app-devtool');
  assert.equal(d.metadata.annotations?.[ORIGINAL_ANNOTATION], 'my_app');
  assert.equal(d.spec?.replicas, 1);
  assert.deepEqual(d.spec?.selector.matchLabels, { app: 'my_app', [DEV_POD_LABEL]: 'my_app' });
  const c = d.spec!.template.spec!.containers[0]!;
  assert.equal(c.name, 'my-app', 'a container name is a DNS label');
  assert.equal(c.image, 'localhost:5000/shop-my_app:devtool-0123');
  assert.equal(c.workingDir, '/app');
  assert.ok(o.claim, 'synced files kept on a volume, as for any dev container');
});
