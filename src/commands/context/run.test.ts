import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ExitCode } from '../../base/errors.ts';
import { commandSandbox, type CommandSandbox, failure, runCommand, success } from '../../../test/command-harness.ts';
import { type InProcessService, inProcessService, SERVICE_URL } from '../../../test/in-process-service.ts';

let service: InProcessService;
before(async () => {
  service = await inProcessService({ registry: 'registry.devtool.example', endpointDomain: 'apps.devtool.example', ingressClass: 'traefik' });
});
after(() => service.close());

const show = async (sandbox: CommandSandbox, env: NodeJS.ProcessEnv = {}) =>
  JSON.parse(success(await runCommand(['context', 'show'], { sandbox, env })).stdout) as Record<string, unknown>;

const rows = async (sandbox: CommandSandbox) =>
  success(await runCommand(['context', 'list'], { sandbox }))
    .stdout.trimEnd()
    .split('\n')
    .map((line) => line.split(/\s{3,}/));

test('`context list` is a table of the kubeconfig contexts, the current one marked', async () => {
  assert.deepEqual(await rows(commandSandbox()), [
    ['Name', 'Namespace', 'Builder', 'Registry'],
    ['alpha *', 'default', 'docker', '-'],
    ['beta', 'team', 'docker', '-'],
  ]);
});

test('`context show` is JSON with the token redacted', async () => {
  const sandbox = commandSandbox();
  const r = success(await runCommand(['context', 'show'], { sandbox }));
  assert.deepEqual(JSON.parse(r.stdout), { name: 'alpha', token: 'REDACTED', namespace: 'default', builder: 'docker', registry: '-', isDevtool: false });
  assert.ok(!r.stdout.includes('fake-alpha-token'));
});

test('`context use CLUSTER` with settings: one line, stored 0600, listed', async () => {
  const sandbox = commandSandbox();
  const r = success(
    await runCommand(['context', 'use', 'beta', '-n', 'dev', '--builder', 'tcp://buildkit.local:1234', '--registry', 'localhost:5000'], { sandbox }),
  );
  assert.deepEqual([r.stdout, r.stderr], ['Using context beta: namespace "dev" @ https://beta.invalid:6443\n', '']);
  assert.deepEqual((await rows(sandbox)).slice(1), [
    ['alpha', 'default', 'docker', '-'],
    ['beta *', 'dev', 'tcp://buildkit.local:1234', 'localhost:5000'],
  ]);
  assert.equal(statSync(join(sandbox.devtoolHome, 'contexts.json')).mode & 0o777, 0o600);
});

test('`context use` refuses bad settings in one line and changes nothing', async () => {
  const sandbox = commandSandbox();
  const refused = async (args: string[], code: number) => failure(await runCommand(['context', 'use', ...args], { sandbox }), code);
  assert.equal(
    await refused(['alpha', '--builder', 'buildkit'], ExitCode.usage),
    'Error: invalid value "buildkit" for flag --builder: expected tcp://HOST:PORT or docker',
  );
  assert.match(await refused(['alpha', '--namespace', 'Not_Valid'], ExitCode.usage), /invalid namespace "Not_Valid"/);
  assert.match(
    await refused(['beta', '--token', 'x'], ExitCode.usage),
    /--token is for devtool service contexts; "beta" is a kubeconfig context whose credentials come from .*kubeconfig\.yaml$/,
  );
  assert.equal(
    await refused(['gamma'], ExitCode.failure),
    'Error: context "gamma" not found: it is neither a kubeconfig context nor a URL; known contexts: alpha, beta',
  );
  assert.match(await refused([], ExitCode.usage), /no terminal to prompt on: pass the context: devtool context use <URL_OR_CLUSTER_CONTEXT>/);
  assert.equal(existsSync(join(sandbox.devtoolHome, 'contexts.json')), false);
});

test('`context use URL --token`: checked with the service, then stored with what the service announces', async () => {
  const sandbox = commandSandbox();
  const r = success(await runCommand(['context', 'use', SERVICE_URL, '--token', service.alice.token], { sandbox, service: service.client }));
  assert.deepEqual([r.stdout, r.stderr], [`Using context ${SERVICE_URL} as alice: namespace "alice-devtool" @ ${SERVICE_URL}\n`, '']);
  assert.deepEqual(await show(sandbox), {
    name: SERVICE_URL,
    token: 'REDACTED',
    namespace: 'alice-devtool',
    builder: `${SERVICE_URL}/api/v1/builds/tunnel`,
    registry: 'registry.devtool.example',
    isDevtool: true,
  });
  const stored = readFileSync(join(sandbox.devtoolHome, 'contexts.json'), 'utf8');
  assert.match(stored, /"endpointDomain": "apps\.devtool\.example"/);
  const log = readFileSync(join(sandbox.devtoolHome, 'devtool.log'), 'utf8');
  assert.ok(!log.includes(service.alice.token), 'the token is not in devtool.log');
  assert.match(log, /--token \*\*\*/);
});

test('the ingress class the service announces is stored, and dropped once it announces none', async () => {
  const sandbox = commandSandbox();
  const stored = () =>
    (JSON.parse(readFileSync(join(sandbox.devtoolHome, 'contexts.json'), 'utf8')) as { contexts: Record<string, { ingressClass?: string }> }).contexts[
      SERVICE_URL
    ];
  success(await runCommand(['context', 'use', SERVICE_URL, '--token', service.alice.token], { sandbox, service: service.client }));
  assert.equal(stored()?.ingressClass, 'traefik');
  // The same URL, now a service whose chart names no class (its own front door is the default).
  const plain = await inProcessService({ endpointDomain: 'apps.devtool.example' });
  try {
    success(await runCommand(['context', 'use', SERVICE_URL, '--token', plain.alice.token], { sandbox, service: plain.client }));
    assert.equal(stored()?.ingressClass, undefined);
  } finally {
    await plain.close();
  }
});

test('--ingress-class: stored for a kubeconfig context, and over what a service announces; a bad one changes nothing', async () => {
  const sandbox = commandSandbox();
  const stored = (name: string) =>
    (JSON.parse(readFileSync(join(sandbox.devtoolHome, 'contexts.json'), 'utf8')) as { contexts: Record<string, { ingressClass?: string }> }).contexts[name];
  success(await runCommand(['context', 'use', 'beta', '--ingress-class', 'nginx'], { sandbox }));
  assert.equal(stored('beta')?.ingressClass, 'nginx');
  success(await runCommand(['context', 'use', SERVICE_URL, '--token', service.alice.token, '--ingress-class', 'nginx'], { sandbox, service: service.client }));
  assert.equal(stored(SERVICE_URL)?.ingressClass, 'nginx');
  assert.equal(
    failure(await runCommand(['context', 'use', 'beta', '--ingress-class', 'Nginx'], { sandbox }), ExitCode.usage),
    `Error: invalid value "Nginx" for flag --ingress-class: expected an IngressClass name (lower-case letters, digits, '-' and '.')`,
  );
  assert.equal(stored('beta')?.ingressClass, 'nginx');
});

test('a refused token stores nothing; in CI no login starts', async () => {
  const sandbox = commandSandbox();
  const refused = await runCommand(['context', 'use', SERVICE_URL, '--token', `dvt_${'a'.repeat(43)}`], { sandbox, service: service.client });
  assert.equal(failure(refused, ExitCode.failure), `Error: token revoked or expired: log in again with devtool context use ${SERVICE_URL}`);
  assert.equal(refused.stdout, '');
  assert.equal(existsSync(join(sandbox.devtoolHome, 'contexts.json')), false);

  const ci = await runCommand(['context', 'use', SERVICE_URL], { sandbox, service: service.client, env: { CI: 'true' } });
  assert.match(failure(ci, ExitCode.failure), /never starts a login in CI: pass --token <API_TOKEN> or set DEVTOOL_URL and DEVTOOL_TOKEN/);
});

test('`context --token T` with DEVTOOL_URL needs no terminal; DEVTOOL_URL and DEVTOOL_TOKEN alone select a context for one run', async () => {
  const sandbox = commandSandbox();
  const env = { DEVTOOL_URL: `${SERVICE_URL}/`, DEVTOOL_TOKEN: service.alice.token };
  assert.deepEqual(await show(sandbox, env), {
    name: SERVICE_URL,
    token: 'REDACTED',
    namespace: 'default',
    builder: `${SERVICE_URL}/api/v1/builds/tunnel`,
    registry: '-',
    isDevtool: true,
  });
  assert.equal((await show(sandbox)).name, 'alpha', 'nothing was stored');
  const r = success(await runCommand(['context', '--token', service.alice.token], { sandbox, service: service.client, env: { DEVTOOL_URL: SERVICE_URL } }));
  assert.match(r.stdout, /^Using context https:\/\/devtool\.example as alice/);
});

test('`context` on a terminal: picks from the known contexts', async () => {
  const sandbox = commandSandbox();
  const r = success(await runCommand(['context'], { sandbox, terminal: true, answers: ['beta'] }));
  assert.equal(r.stdout, 'Using context beta: namespace "team" @ https://beta.invalid:6443\n');
});

test('`context delete`: the stored settings go; a kubeconfig context or an unknown one is refused in one line', async () => {
  const sandbox = commandSandbox();
  success(await runCommand(['context', 'use', SERVICE_URL, '--token', service.alice.token], { sandbox, service: service.client }));
  assert.equal(success(await runCommand(['context', 'delete', SERVICE_URL], { sandbox })).stdout, `Context "${SERVICE_URL}" deleted\n`);
  assert.equal((await show(sandbox)).name, 'alpha');
  assert.equal(
    failure(await runCommand(['context', 'delete', SERVICE_URL], { sandbox }), ExitCode.failure),
    `Error: context "${SERVICE_URL}" not found; 'devtool context list' shows the known contexts`,
  );
  assert.match(
    failure(await runCommand(['context', 'delete', 'beta'], { sandbox }), ExitCode.failure),
    /context "beta" has no devtool settings to delete; it is defined by .*kubeconfig\.yaml \(remove it there with 'kubectl config delete-context beta'\)$/,
  );
  assert.match(failure(await runCommand(['context', 'delete'], { sandbox }), ExitCode.usage), /missing argument <CONTEXT_URL_OR_NAME>/);
});
