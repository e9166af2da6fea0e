import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ExitCode } from '../../base/errors.ts';
import { commandSandbox, failure, runCommand, success, TEST_NOW } from '../../../test/command-harness.ts';
import { type InProcessService, inProcessService, logIn, SERVICE_URL } from '../../../test/in-process-service.ts';

let service: InProcessService;
before(async () => {
  service = await inProcessService();
});
after(() => service.close());

test("prints an ExecCredential of the user's token, and asks the service again only once it is stale", async () => {
  const sandbox = commandSandbox();
  await logIn(sandbox, service, service.alice);
  const before = service.kubeTokensIssued.length;
  const r = success(await runCommand(['kubetoken', '--context', SERVICE_URL], { sandbox, service: service.client }));
  assert.equal(r.stderr, '');
  const credential = JSON.parse(r.stdout) as { kind: string; apiVersion: string; status: { token: string; expirationTimestamp: string } };
  assert.equal(credential.kind, 'ExecCredential');
  assert.match(credential.apiVersion, /^client\.authentication\.k8s\.io\//);
  assert.match(credential.status.token, /^sa-token-of-alice-/);
  assert.equal(Date.parse(credential.status.expirationTimestamp), TEST_NOW.getTime() + 3600_000);
  success(await runCommand(['kubetoken', '-c', SERVICE_URL], { sandbox, service: service.client }));
  assert.equal(service.kubeTokensIssued.length, before + 1, 'the second run read the cache');
});

test('the context of DEVTOOL_URL and DEVTOOL_TOKEN serves when it names the same URL (CI)', async () => {
  const r = success(
    await runCommand(['kubetoken', '--context', `${SERVICE_URL}/`], {
      env: { DEVTOOL_URL: SERVICE_URL, DEVTOOL_TOKEN: service.alice.token },
      service: service.client,
    }),
  );
  assert.match(r.stdout, /sa-token-of-alice-/);
});

test('--context is required, and must be a service context', async () => {
  assert.equal(failure(await runCommand(['kubetoken']), ExitCode.usage), 'Error: --context: required: the URL of the devtool service context');
  assert.equal(
    failure(await runCommand(['kubetoken', '--context', 'beta']), ExitCode.usage),
    'Error: --context: "beta" is not a devtool service context: its kubeconfig entry has its own credentials',
  );
  const sandbox = commandSandbox();
  failure(await runCommand(['context', 'use', SERVICE_URL], { sandbox, service: service.client, env: { CI: 'true' } }), ExitCode.failure);
  assert.match(failure(await runCommand(['kubetoken', '--context', SERVICE_URL], { sandbox }), ExitCode.unavailable), /requires a logged-in user/);
});
