import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadCompose } from '../compose/load.ts';
import type { BuildRequest } from './backend.ts';
import { composeImages, composeImageSpecs, plannedComposeImages } from './compose-images.ts';
import { DockerCredentials } from './docker-config.ts';

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

test('deploy --dry-run renders the references deploy builds: <registry>/<environment>-<service>:<content tag>, nothing built', async () => {
  const { project: p } = project(
    'services:\n  api:\n    build:\n      context: api\n      args: [VERSION=$TAG]\n  web:\n    build: web\n    image: localhost:5000/team/web:dev\n' +
      '  local:\n    build: web\n    image: myapp:latest\n  db:\n    image: postgres\n',
    { 'api/Dockerfile': 'FROM x\nCOPY . /app', 'api/main.go': 'package main', 'web/Dockerfile': 'FROM y' },
  );
  const planned = await plannedComposeImages(p, 'shop', { registry: 'localhost:5000', contextName: 'alpha' });
  assert.match(planned.api!, /^localhost:5000\/shop-api:devtool-[0-9a-f]{24}$/);
  assert.equal(planned.web, 'localhost:5000/team/web:dev');
  assert.match(planned.local!, /^localhost:5000\/shop-local:devtool-[0-9a-f]{24}$/);
  assert.equal(planned.db, undefined);
  // The same references deploy gets from really building (a backend that records what it is asked).
  const requests: BuildRequest[] = [];
  const built = await composeImages(
    p,
    'shop',
    true,
    {
      cwd: p.projectDir,
      registry: 'localhost:5000',
      contextName: 'alpha',
      credentials: new DockerCredentials({}),
      backend: async () => ({
        name: 'fake',
        build: async (r: BuildRequest) => {
          requests.push(r);
          return {};
        },
        close: async () => undefined,
      }),
    },
    { step: () => undefined, done: () => undefined, warn: () => undefined, output: () => undefined },
  );
  assert.deepEqual(built, planned);
  assert.ok(requests.some((r) => r.tags.includes(planned.api!)));
});

test('without a registry, a service whose image must go to one is a located error; an image naming a registry needs none', async () => {
  const files = { 'web/Dockerfile': 'FROM y' };
  const { project: p } = project('services:\n  web:\n    build: web\n  named:\n    build: web\n    image: localhost:5000/named:1\n', files);
  await assert.rejects(
    plannedComposeImages(p, 'shop', {}),
    new RegExp(
      '^LocatedError: compose\\.yaml:3:12: field services\\.web\\.build: ' +
        'service "web" has a build and no image naming a registry, and there is no current context: ',
    ),
  );
  await assert.rejects(plannedComposeImages(p, 'shop', { contextName: 'alpha' }), /the context "alpha" has no registry/);
  const { project: q } = project('services:\n  named:\n    build: web\n    image: localhost:5000/named:1\n', files);
  assert.deepEqual(await plannedComposeImages(q, 'shop', {}), { named: 'localhost:5000/named:1' });
});
