/**
 * The forms users write, through the built CLI and with no cluster: `deploy --dry-run`
 * renders offline (a KUBECONFIG pointing nowhere, no context) with the warnings of a deploy on
 * stderr; --file names Compose files by content and is repeatable, merged in order; a service
 * with a build and no image renders the image reference deploy would push; a manifest whose deploy is
 * Compose files dry-runs too.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { createSandbox, ensureBuilt, runDevtool, type Sandbox } from './cli.ts';

before(() => ensureBuilt());

function folder(files: Record<string, string>): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'devtool-forms-')), 'shop');
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

interface Obj {
  kind: string;
  metadata: { name: string; annotations?: Record<string, string> };
  spec?: { template?: { spec?: { containers?: { image: string; ports?: { containerPort: number }[]; env?: { name: string; value: string }[] }[] } } };
}

function objects(yaml: string): Obj[] {
  return parseAllDocuments(yaml).map((d) => d.toJS() as Obj);
}

/** A sandbox whose KUBECONFIG names a file that does not exist: no cluster, no context at all. */
function nowhere(): Sandbox {
  const sb = createSandbox();
  return { ...sb, env: { ...sb.env, KUBECONFIG: join(sb.root, 'no-such-kubeconfig') } };
}

const STACK = `services:
  api:
    image: registry.example.com/api:1
    ports: ["8080:80"]
    environment:
      MODE: \${MODE}
    labels:
      com.example.team: payments
      traefik.http.routers.accounting-frontend-secure-websecure-router.rule: Host(\`shop.example.com\`)
`;

test('deploy --dry-run --namespace renders offline, with no reachable cluster and no context; warnings on stderr', () => {
  const sb = nowhere();
  const dir = folder({ 'compose.yaml': STACK });
  const r = runDevtool(['deploy', '--dry-run', '--namespace', 'ns1'], { env: { ...sb.env, DEVTOOL_ENDPOINT_DOMAIN: 'apps.example.com' }, cwd: dir });
  assert.equal(r.code, 0, r.stderr);
  const kinds = objects(r.stdout).map((o) => `${o.kind}/${o.metadata.name}`);
  assert.deepEqual(kinds, ['Service/api', 'Deployment/api', 'Ingress/api']);
  for (const o of objects(r.stdout)) assert.equal(o.metadata.annotations?.['com.example.team'], 'payments', `${o.kind} is annotated`);
  // The same warnings deploy prints: the unset variable, the label that cannot be an annotation.
  assert.match(r.stderr, /^! variable MODE is not set: using an empty string$/m);
  assert.match(
    r.stderr,
    /^! services\.api\.labels: skipped "traefik\.http\.routers\.accounting-frontend-secure-websecure-router\.rule" \(compose\.yaml:9:7\)/m,
  );
  assert.doesNotMatch(r.stderr, /Error/);

  const without = runDevtool(['deploy', '--dry-run'], { env: sb.env, cwd: dir });
  assert.equal(without.code, 1);
  assert.match(without.stderr, /^Error: no current context to take the namespace from: pass --namespace to render offline/);
});

test('deploy --dry-run prints the warnings deploy prints, on stderr, whatever the context', () => {
  const dir = folder({
    'compose.yaml': 'services:\n  api:\n    image: registry.example.com/api:1\n    privileged: true\n    environment:\n      X: ${UNSET_X}\n',
  });
  const r = runDevtool(['deploy', '--dry-run'], { env: createSandbox().env, cwd: dir });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.stderr.split('\n').filter(Boolean), [
    '! variable UNSET_X is not set: using an empty string',
    '! fields not used on Kubernetes, ignored: services.api.privileged',
  ]);
  assert.match(r.stdout, /^kind: Deployment$/m);
});

test('--file names Compose files by content, whatever their names, and is repeatable: merged in order', () => {
  // The fixture kubeconfig (its servers do not exist; nothing is contacted), so this test needs no offline rendering.
  const sb = createSandbox();
  const dir = folder({
    'stack.yaml': 'services:\n  api:\n    image: registry.example.com/api:1\n    ports: ["80"]\n',
    'docker-compose.prod.yml': 'services:\n  api:\n    image: registry.example.com/api:2\n    expose: ["9000"]\n',
    'compose.override.yaml': 'services:\n  api:\n    environment:\n      DEBUG: "1"\n',
    'devtool.yml': 'deploy:\n  - echo the manifest is not used when --file names Compose files\n',
  });
  const one = runDevtool(['deploy', '--dry-run', '-n', 'ns1', '-f', 'stack.yaml'], { env: sb.env, cwd: dir });
  assert.equal(one.code, 0, one.stderr);
  assert.equal(objects(one.stdout).find((o) => o.kind === 'Deployment')?.spec?.template?.spec?.containers?.[0]?.image, 'registry.example.com/api:1');

  const merged = runDevtool(['deploy', '--dry-run', '-n', 'ns1', '-f', 'stack.yaml', '--file', 'docker-compose.prod.yml', '-f', 'compose.override.yaml'], {
    env: sb.env,
    cwd: dir,
  });
  assert.equal(merged.code, 0, merged.stderr);
  const c = objects(merged.stdout).find((o) => o.kind === 'Deployment')?.spec?.template?.spec?.containers?.[0];
  assert.equal(c?.image, 'registry.example.com/api:2', 'the later file wins');
  assert.deepEqual(
    c?.ports?.map((p) => p.containerPort),
    [80, 9000],
    'lists of every file are kept',
  );
  assert.deepEqual(c?.env, [{ name: 'DEBUG', value: '1' }]);

  const mixed = runDevtool(['deploy', '--dry-run', '-n', 'ns1', '-f', 'stack.yaml', '-f', 'devtool.yml'], { env: sb.env, cwd: dir });
  assert.equal(mixed.code, 1);
  assert.match(mixed.stderr, /^Error: devtool\.yml is a devtool manifest: a manifest is given alone with --file/);
  const missing = runDevtool(['deploy', '--dry-run', '-n', 'ns1', '-f', 'stack.yaml', '-f', 'nope.yaml'], { env: sb.env, cwd: dir });
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /^Error: nope\.yaml not found$/m);
});

test('a service with build and no image renders <registry>/<environment>-<service>:<content tag>; no registry is a located error', () => {
  const dir = folder({ 'compose.yaml': 'services:\n  api:\n    build: api\n', 'api/Dockerfile': 'FROM scratch\n', 'api/main.go': 'package main\n' });
  // The fixture kubeconfig's current context (alpha) points at a server that does not exist: nothing is contacted.
  const sb = createSandbox();
  mkdirSync(sb.devtoolHome, { recursive: true });
  writeFileSync(
    join(sb.devtoolHome, 'contexts.json'),
    JSON.stringify({ contexts: { alpha: { name: 'alpha', isDevtool: false, registry: 'localhost:5000' } } }),
  );
  const r = runDevtool(['deploy', '--dry-run', '-n', 'ns1'], { env: sb.env, cwd: dir });
  assert.equal(r.code, 0, r.stderr);
  const image = objects(r.stdout).find((o) => o.kind === 'Deployment')?.spec?.template?.spec?.containers?.[0]?.image;
  assert.match(image ?? '', /^localhost:5000\/shop-api:devtool-[0-9a-f]{24}$/);
  const again = runDevtool(['deploy', '--dry-run', '-n', 'ns1'], { env: sb.env, cwd: dir });
  assert.equal(again.stdout, r.stdout, 'the content tag is stable');

  const none = runDevtool(['deploy', '--dry-run', '-n', 'ns1'], { env: nowhere().env, cwd: dir });
  assert.equal(none.code, 1);
  assert.match(
    none.stderr,
    /^Error: compose\.yaml:3:12: field services\.api\.build: service "api" has a build and no image naming a registry, and there is no current context: /,
  );
});

test('a manifest whose deploy is a Compose file (as init -v1 writes it) dry-runs', () => {
  const sb = createSandbox();
  const dir = folder({ 'devtool.yml': 'deploy:\n  compose: app.yaml\n', 'app.yaml': 'services:\n  web:\n    image: registry.example.com/web:1\n' });
  const r = runDevtool(['deploy', '--dry-run', '-n', 'ns1'], { env: sb.env, cwd: dir });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(
    objects(r.stdout).map((o) => `${o.kind}/${o.metadata.name}`),
    ['Deployment/web'],
  );
  const commands = folder({ 'devtool.yml': 'deploy:\n  - kubectl apply -f k8s\n' });
  const refused = runDevtool(['deploy', '--dry-run', '-n', 'ns1'], { env: sb.env, cwd: commands });
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /--dry-run previews Compose files only: the deploy commands of .*devtool\.yml \(kubectl apply -f k8s\) cannot be previewed/);
});
