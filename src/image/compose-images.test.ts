import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadCompose } from '../compose/load.ts';
import type { BuildRequest } from './backend.ts';
import { composeDeployImages, composeImageSpecs, requireRegistryForBuilds } from './compose-images.ts';
import { DockerCredentials } from './docker-config.ts';
import type { BuildSetup } from './select.ts';

function project(compose: string, files: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'compose-build-'));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  writeFileSync(join(dir, 'compose.yaml'), compose);
  return { dir, project: loadCompose({ cwd: dir, files: [join(dir, 'compose.yaml')], env: { TAG: 'v1' } }) };
}

test('services with a build become images: context, dockerfile, target, args, cache', () => {
  const { dir, project: p } = project(
    'services:\n  api:\n    build:\n      context: api\n      dockerfile: docker/Dockerfile\n      target: prod\n      args: [VERSION=$TAG]\n' +
      '      cache_from: [localhost:5000/api:cache]\n      export_cache: localhost:5000/api:cache\n  db:\n    image: postgres\n',
    { 'api/docker/Dockerfile': 'FROM x' },
  );
  assert.deepEqual(composeImageSpecs(p), [
    {
      name: 'api',
      contextDir: join(dir, 'api'),
      dockerfile: join(dir, 'api/docker/Dockerfile'),
      target: 'prod',
      args: { VERSION: 'v1' },
      secrets: {},
      noCache: false,
      cacheFrom: ['localhost:5000/api:cache'],
      exportCache: ['localhost:5000/api:cache'],
      dependsOn: [],
    },
  ]);
});

test('`image` names where to push only when it names a registry; a bare name is local in Compose', () => {
  const { project: p } = project('services:\n  a:\n    build: .\n    image: localhost:5000/team/a:dev\n  b:\n    build: .\n    image: myapp:latest\n', {
    Dockerfile: 'FROM x',
  });
  const [a, b] = composeImageSpecs(p);
  assert.equal(a!.image, 'localhost:5000/team/a:dev');
  assert.equal(b!.image, undefined);
});

test('a missing Dockerfile and a remote context are located in the Compose file', () => {
  const { project: p } = project(
    'services:\n  a:\n    build: ./nope\n  b:\n    build:\n      context: .\n      dockerfile: Missing.Dockerfile\n  c:\n' +
      '    build: https://github.com/acme/c.git\n',
  );
  assert.throws(
    () => composeImageSpecs(p),
    (e: Error & { lines(): string[] }) => {
      const l = e.lines();
      assert.equal(l.length, 3);
      assert.match(l[0]!, /^compose\.yaml:3:12: service "a": build context nope is not a folder$/);
      assert.match(l[1]!, /^compose\.yaml:6:7: service "b": Dockerfile Missing\.Dockerfile not found$/);
      assert.match(l[2]!, /^compose\.yaml:9:12: service "c": remote build contexts \(https:\/\/github\.com\/acme\/c\.git\) are not supported/);
      return true;
    },
  );
});

function setup(registry?: string): BuildSetup {
  return {
    cwd: '/',
    ...(registry ? { registry } : {}),
    contextName: 'local',
    credentials: new DockerCredentials({}),
    backend: () => Promise.reject(new Error('a dry run opens no backend')),
  };
}

const quiet = { step() {}, done() {}, warn() {}, output() {} };

test('dry run: the baked reference of each service with host files, FROM its image or the content reference of its build', async () => {
  const { project: p } = project(
    'services:\n  web:\n    image: nginx:1\n    volumes: ["./site:/usr/share/nginx/html", "./data:/data", "/etc/localtime:/etc/localtime"]\n' +
      '  api:\n    build: ./api\n    volumes: ["./api/conf:/conf:ro"]\n',
    { 'site/index.html': 'hi', 'api/Dockerfile': 'FROM x', 'api/conf/a.yaml': 'a: 1' },
  );
  const { images, hostVolumes } = await composeDeployImages(p, 'shop', { force: false, setup: setup('localhost:5000/team'), progress: quiet, dryRun: true });
  assert.match(images.web!, /^localhost:5000\/team\/shop-web:devtool-[0-9a-f]{24}$/);
  assert.match(images.api!, /^localhost:5000\/team\/shop-api:devtool-[0-9a-f]{24}$/);
  assert.deepEqual(hostVolumes.web, {
    '/usr/share/nginx/html': { use: 'bake' },
    '/data': { use: 'claim' },
    '/etc/localtime': { use: 'skip', reason: 'it is outside the Compose folder' },
  });
  // Computed from the files alone: the same references every time.
  const again = await composeDeployImages(p, 'shop', { force: false, setup: setup('localhost:5000/team'), progress: quiet, dryRun: true });
  assert.deepEqual(again.images, images);
});

test('dry run of a build with an `image` tag and no host volume: the tag deploy would run', async () => {
  const { project: p } = project('services:\n  api:\n    build: .\n    image: localhost:5000/team/api:dev\n  b:\n    build: .\n', { Dockerfile: 'FROM x' });
  const { images } = await composeDeployImages(p, 'shop', { force: false, setup: setup('localhost:5000'), progress: quiet, dryRun: true });
  assert.equal(images.api, 'localhost:5000/team/api:dev');
  assert.match(images.b!, /^localhost:5000\/shop-b:devtool-[0-9a-f]{24}$/);
});

test('without a registry nothing is baked: the volumes are skipped, and the reason says how to set one', async () => {
  const { project: p } = project('services:\n  web:\n    image: nginx:1\n    volumes: ["./site:/usr/share/nginx/html", "./data:/data"]\n', {
    'site/index.html': 'hi',
  });
  const { images, hostVolumes } = await composeDeployImages(p, 'shop', { force: false, setup: setup(), progress: quiet });
  assert.deepEqual(images, {});
  assert.deepEqual(hostVolumes.web, {
    '/usr/share/nginx/html': {
      use: 'skip',
      reason:
        `deploy adds host files to an image pushed to the context's registry, and the context "local" has none: ` +
        `set one with 'devtool context use local --registry HOST'`,
    },
    '/data': { use: 'claim' },
  });
});

test('deploy --dry-run renders the references deploy builds: <registry>/<environment>-<service>:<content tag>, nothing built', async () => {
  const { project: p } = project(
    'services:\n  api:\n    build:\n      context: api\n      args: [VERSION=$TAG]\n  web:\n    build: web\n    image: localhost:5000/team/web:dev\n' +
      '  local:\n    build: web\n    image: myapp:latest\n  db:\n    image: postgres\n',
    { 'api/Dockerfile': 'FROM x\nCOPY . /app', 'api/main.go': 'package main', 'web/Dockerfile': 'FROM y' },
  );
  const planned = (await composeDeployImages(p, 'shop', { force: false, setup: setup('localhost:5000'), progress: quiet, dryRun: true })).images;
  assert.match(planned.api!, /^localhost:5000\/shop-api:devtool-[0-9a-f]{24}$/);
  assert.equal(planned.web, 'localhost:5000/team/web:dev');
  assert.match(planned.local!, /^localhost:5000\/shop-local:devtool-[0-9a-f]{24}$/);
  assert.equal(planned.db, undefined);
  // The same references deploy gets from really building (a backend that records what it is asked).
  const requests: BuildRequest[] = [];
  const built = await composeDeployImages(p, 'shop', {
    force: true,
    setup: {
      ...setup('localhost:5000'),
      backend: async () => ({
        name: 'fake',
        build: async (r: BuildRequest) => {
          requests.push(r);
          return {};
        },
        close: async () => undefined,
      }),
    },
    progress: quiet,
  });
  assert.deepEqual(built.images, planned);
  assert.ok(requests.some((r) => r.tags.includes(planned.api!)));
});

test('without a registry, a dry run of a service whose image must go to one is a located error; an image naming a registry needs none', () => {
  const files = { 'web/Dockerfile': 'FROM y' };
  const { project: p } = project('services:\n  web:\n    build: web\n  named:\n    build: web\n    image: localhost:5000/named:1\n', files);
  assert.throws(
    () => requireRegistryForBuilds(p, 'shop', {}),
    new RegExp(
      '^LocatedError: compose\\.yaml:3:12: field services\\.web\\.build: ' +
        'service "web" has a build and no image naming a registry, and there is no current context: ',
    ),
  );
  assert.throws(() => requireRegistryForBuilds(p, 'shop', { contextName: 'alpha' }), /the context "alpha" has no registry/);
  assert.doesNotThrow(() => requireRegistryForBuilds(p, 'shop', { registry: 'localhost:5000' }));
  const { project: q } = project('services:\n  named:\n    build: web\n    image: localhost:5000/named:1\n', files);
  assert.doesNotThrow(() => requireRegistryForBuilds(q, 'shop', {}));
});
