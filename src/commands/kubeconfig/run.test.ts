import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { ExitCode } from '../../base/errors.ts';
import { commandSandbox, failure, FIXTURE_KUBECONFIG, runCommand, success } from '../../../test/command-harness.ts';
import { type InProcessService, inProcessService, KUBE_SERVER, logIn, SERVICE_URL } from '../../../test/in-process-service.ts';

let service: InProcessService;
before(async () => {
  service = await inProcessService();
});
after(() => service.close());

test("a cluster context: the context's namespace is written into the kubeconfig, every other entry kept", async () => {
  const sandbox = commandSandbox();
  success(await runCommand(['context', 'use', 'beta', '--namespace', 'dev'], { sandbox }));
  const r = success(await runCommand(['kubeconfig'], { sandbox }));
  assert.deepEqual([r.stdout, r.stderr], [`Updated context "beta" (namespace "dev") in ${sandbox.kubeconfig}\n`, '']);
  const written = parseYaml(readFileSync(sandbox.kubeconfig, 'utf8'));
  const fixture = parseYaml(FIXTURE_KUBECONFIG);
  assert.equal(written['current-context'], 'beta');
  assert.deepEqual(written.contexts, [fixture.contexts[0], { name: 'beta', context: { ...fixture.contexts[1].context, namespace: 'dev' } }]);
  assert.deepEqual([written.clusters, written.users], [fixture.clusters, fixture.users]);
  assert.equal(statSync(sandbox.kubeconfig).mode & 0o777, 0o600);
});

test("a service context: an entry for the service's API server whose credentials come from `devtool kubetoken`", async () => {
  const sandbox = commandSandbox();
  await logIn(sandbox, service, service.alice);
  const r = success(await runCommand(['kubeconfig'], { sandbox, service: service.client }));
  assert.equal(r.stdout, `Updated context "devtool_example" (namespace "alice-devtool") in ${sandbox.kubeconfig}\n`);
  const written = parseYaml(readFileSync(sandbox.kubeconfig, 'utf8'));
  assert.equal(written['current-context'], 'devtool_example');
  assert.equal(written.clusters.find((c: { name: string }) => c.name === 'devtool_example').cluster.server, KUBE_SERVER);
  const exec = written.users.find((u: { name: string }) => u.name === 'devtool_example').user.exec;
  assert.deepEqual(exec.args.slice(1), ['kubetoken', '--context', SERVICE_URL]);
  assert.deepEqual(exec.env, [{ name: 'DEVTOOL_HOME', value: sandbox.devtoolHome }]);
  // Fetched at once, so a refused token fails here and the plugin's cache is warm.
  assert.ok(service.kubeTokensIssued.includes('alice'));
});

test('a service context without a login: one line, exit 3, the kubeconfig untouched', async () => {
  const sandbox = commandSandbox();
  failure(await runCommand(['context', 'use', SERVICE_URL], { sandbox, service: service.client, env: { CI: 'true' } }), ExitCode.failure);
  assert.match(failure(await runCommand(['kubeconfig'], { sandbox }), ExitCode.unavailable), /'devtool kubeconfig' requires a logged-in user/);
  assert.equal(readFileSync(sandbox.kubeconfig, 'utf8'), FIXTURE_KUBECONFIG);
});
