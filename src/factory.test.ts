import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { UnavailableError } from './base/errors.ts';
import { createFactory } from './factory.ts';
import type { KubeTarget } from './kube/target.ts';
import { createTestFactory, fakeKubeClient } from '../test/command-harness.ts';
import { inProcessService, KUBE_SERVER, SERVICE_URL } from '../test/in-process-service.ts';

const KUBECONFIG = `apiVersion: v1
kind: Config
current-context: dev
clusters: [{name: c, cluster: {server: 'https://127.0.0.1:6443'}}]
users: [{name: u, user: {token: t0k3n}}]
contexts: [{name: dev, context: {cluster: c, user: u, namespace: team}}]
`;

test("kube() makes a client for the context, in the context's namespace unless told another", async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'devtool-factory-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  writeFileSync(join(root, 'kubeconfig'), KUBECONFIG);
  const env = { DEVTOOL_HOME: join(root, 'home'), KUBECONFIG: join(root, 'kubeconfig') };
  const f = createFactory({ io: { stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough() }, env, cwd: root });
  const context = await f.contexts.requireCurrent();
  const client = await f.kube({ context });
  assert.deepEqual([client.context.name, client.namespace, client.kc.getCurrentCluster()?.server], ['dev', 'team', 'https://127.0.0.1:6443']);
  assert.equal((await f.kube({ context, namespace: 'other' })).namespace, 'other');
  await assert.rejects(f.kube({ context: { ...context, isDevtool: true } }), UnavailableError);
});

test("a test's clients replace the real ones: kube() is the test's, and kubeCredentials() asks the test's service", async (t) => {
  const service = await inProcessService();
  t.after(() => service.close());
  const given: KubeTarget[] = [];
  const { f } = createTestFactory({
    kube: async (target) => {
      given.push(target);
      return fakeKubeClient(target, {});
    },
    service: service.client,
  });
  const context = await f.contexts.requireCurrent();
  assert.equal((await f.kube({ context, namespace: 'n1' })).namespace, 'n1');
  assert.deepEqual(
    given.map((g) => [g.context.name, g.namespace]),
    [['alpha', 'n1']],
  );
  const credentials = await (await f.kubeCredentials({ ...context, name: SERVICE_URL, isDevtool: true, token: service.alice.token })).current();
  assert.equal(credentials.server, KUBE_SERVER);
  assert.deepEqual(service.kubeTokensIssued, ['alice']);
});
