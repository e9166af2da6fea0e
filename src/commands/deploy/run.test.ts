import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { DevtoolError, ExitCode } from '../../base/errors.ts';
import { commandSandbox, type CommandSandbox, failure, runCommand, success } from '../../../test/command-harness.ts';
import { inProcessService, logIn } from '../../../test/in-process-service.ts';

const COMPOSE = 'services:\n  web:\n    image: nginx:1.27\n    ports: ["8080:80"]\n    environment:\n      GREETING: ${GREETING:-hello}\n';

function composeProject(): CommandSandbox {
  const sandbox = commandSandbox();
  writeFileSync(join(sandbox.project, 'compose.yaml'), COMPOSE);
  return sandbox;
}

/** Ports become public endpoints, under this domain. */
const env = { DEVTOOL_ENDPOINT_DOMAIN: 'apps.example' };

const objects = (yaml: string) => parseAllDocuments(yaml).map((d) => d.toJS() as { kind: string; metadata: { name: string } });

test('--dry-run prints the objects of the Compose file, its endpoints in the namespace of the current context, and contacts no cluster', async () => {
  const sandbox = composeProject();
  const r = success(await runCommand(['deploy', '--dry-run'], { sandbox, env }));
  const printed = objects(r.stdout);
  assert.ok(
    printed.some((o) => o.kind === 'Deployment' && o.metadata.name === 'web'),
    r.stdout,
  );
  assert.match(r.stdout, /host: web-default\.apps\.example/);
});

test('--dry-run: --namespace, --name and --var reach the objects', async () => {
  const sandbox = composeProject();
  const r = success(await runCommand(['deploy', '--dry-run', '-n', 'feature', '--name', 'shop', '--var', 'GREETING=bonjour'], { sandbox, env }));
  assert.match(r.stdout, /host: web-feature\.apps\.example/);
  assert.match(r.stdout, /value: bonjour/);
  assert.match(r.stdout, /devtool\.dev\/environment: shop$/m);
});

test('--dry-run: the Ingress names DEVTOOL_INGRESS_CLASS; a bad one is a usage error', async () => {
  const sandbox = composeProject();
  const r = success(await runCommand(['deploy', '--dry-run'], { sandbox, env: { ...env, DEVTOOL_INGRESS_CLASS: 'traefik' } }));
  assert.match(r.stdout, /^kind: Ingress\n(.*\n)*spec:\n {2}ingressClassName: traefik\n/m);
  assert.doesNotMatch(success(await runCommand(['deploy', '--dry-run'], { sandbox, env })).stdout, /ingressClassName/);
  assert.equal(
    failure(await runCommand(['deploy', '--dry-run'], { sandbox, env: { ...env, DEVTOOL_INGRESS_CLASS: 'Traefik' } }), ExitCode.usage),
    "Error: DEVTOOL_INGRESS_CLASS=Traefik: not an IngressClass name (lower-case letters, digits, '-' and '.')",
  );
});

test('--dry-run with --namespace needs no context at all', async () => {
  const sandbox = commandSandbox('apiVersion: v1\nkind: Config\n');
  writeFileSync(join(sandbox.project, 'compose.yaml'), COMPOSE);
  assert.match(
    failure(await runCommand(['deploy', '--dry-run'], { sandbox, env }), ExitCode.failure),
    /no current context to take the namespace from: pass --namespace to render offline/,
  );
  success(await runCommand(['deploy', '--dry-run', '-n', 'offline'], { sandbox, env }));
  assert.match(
    failure(await runCommand(['deploy', '--dry-run', '-n', 'offline'], { sandbox }), ExitCode.failure),
    /compose\.yaml:4:13: public endpoints need an endpoint domain: set DEVTOOL_ENDPOINT_DOMAIN/,
  );
});

test('bad flags are usage errors before anything is read or applied', async () => {
  const sandbox = composeProject();
  assert.match(
    failure(await runCommand(['deploy', '--var', 'NOEQUALS'], { sandbox }), ExitCode.usage),
    /invalid value "\.\.\." for flag --var: expected KEY=VALUE, found no "="/,
  );
  assert.match(failure(await runCommand(['deploy', '--var', '1X=a'], { sandbox }), ExitCode.usage), /invalid value "1X=\.\.\." for flag --var/);
  assert.match(failure(await runCommand(['deploy', '--wait=maybe'], { sandbox }), ExitCode.usage), /--wait: expected true or false/);
  assert.match(failure(await runCommand(['deploy', '--timeout', '300'], { sandbox }), ExitCode.usage), /invalid value "300" for flag --timeout/);
  assert.match(failure(await runCommand(['deploy', '--dry-run', '-n', 'Bad_NS'], { sandbox }), ExitCode.usage), /invalid namespace "Bad_NS"/);
});

test('a folder with nothing to deploy: one line, and no cluster is asked', async () => {
  const sandbox = commandSandbox();
  const r = await runCommand(['deploy'], { sandbox });
  assert.equal(
    failure(r, ExitCode.failure),
    `Error: nothing to deploy in ${sandbox.project}: no devtool.yml and no Compose file ` +
      '(compose.yaml, compose.yml, docker-compose.yaml, docker-compose.yml); name one with --file',
  );
  assert.equal(r.stdout, '');
});

test('on a service context, deploy wakes a sleeping namespace first and says so in one line', async () => {
  const service = await inProcessService();
  try {
    const sandbox = composeProject();
    await logIn(sandbox, service, service.alice);
    service.owned.deployments.set('alice-devtool', [
      { metadata: { name: 'web', annotations: { 'devtool.dev/replicas-before-sleep': '2' } }, spec: { replicas: 0 } },
    ]);
    await service.store.setNamespaceMarks('alice-devtool', { sleepingSince: '2026-05-01T10:00:00.000Z', sleptBy: 'alice' });
    // The cluster is where this test stops: the wake came before it.
    const kube = async () => {
      throw new DevtoolError('no cluster in this test');
    };
    const r = await runCommand(['deploy'], { sandbox, service: service.client, kube, env });
    assert.equal(r.code, ExitCode.failure);
    assert.equal(r.stderr, 'namespace alice-devtool was asleep (since 2026-05-01T10:00:00.000Z): woken for this deploy\nError: no cluster in this test\n');
    assert.equal(service.owned.deployments.get('alice-devtool')![0]!.spec.replicas, 2);
    assert.equal((await service.store.getNamespace('alice-devtool'))!.marks?.sleepingSince, undefined);
  } finally {
    await service.close();
  }
});

test('on a service context, deploy into an awake namespace asks nothing more of the service than the list', async () => {
  const service = await inProcessService();
  try {
    const sandbox = composeProject();
    await logIn(sandbox, service, service.alice);
    const kube = async () => {
      throw new DevtoolError('no cluster in this test');
    };
    const r = await runCommand(['deploy'], { sandbox, service: service.client, kube, env });
    assert.equal(r.stderr, 'Error: no cluster in this test\n');
    assert.deepEqual(service.kubeTokensIssued, [], 'no wake: no token of the owner issued');
  } finally {
    await service.close();
  }
});
