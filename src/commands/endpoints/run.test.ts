import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ExitCode } from '../../base/errors.ts';
import { commandSandbox, failure, runCommand, success } from '../../../test/command-harness.ts';
import { endpointsHandler } from './run.ts';

const env = { DEVTOOL_ENDPOINT_DOMAIN: 'apps.example' };

/** A namespace whose Ingresses of the environment have these hosts; it records what was asked. */
function ingressCluster(hosts: string[]) {
  const asked: string[] = [];
  const handler = endpointsHandler(async (_f, target) => ({
    ingresses: async (labelSelector) => {
      asked.push(`${target.context.name} ${target.namespace} ${labelSelector}`);
      return [{ spec: { rules: hosts.map((host) => ({ host })) } }];
    },
  }));
  return { handler, asked };
}

test('one HTTPS URL a line, sorted, once each; json and md formats', async () => {
  const sandbox = commandSandbox();
  const cluster = ingressCluster(['web-default.apps.example', 'api-default.apps.example', 'web-default.apps.example']);
  const plain = success(await runCommand(['endpoints'], { sandbox, env, handler: cluster.handler }));
  assert.deepEqual([plain.stdout, plain.stderr], ['https://api-default.apps.example\nhttps://web-default.apps.example\n', '']);
  assert.deepEqual(cluster.asked, ['alpha default devtool.dev/environment=project']);
  const json = success(await runCommand(['endpoints', '-o', 'json'], { sandbox, env, handler: cluster.handler }));
  assert.deepEqual(JSON.parse(json.stdout), ['https://api-default.apps.example', 'https://web-default.apps.example']);
  const md = success(await runCommand(['endpoints', '--output', 'md'], { sandbox, env, handler: cluster.handler }));
  assert.equal(
    md.stdout,
    '- [https://api-default.apps.example](https://api-default.apps.example)\n- [https://web-default.apps.example](https://web-default.apps.example)\n',
  );
});

test('--context, --namespace and --name choose where to look', async () => {
  const cluster = ingressCluster([]);
  success(await runCommand(['endpoints', '-c', 'beta', '-n', 'n1', '--name', 'Shop'], { env, handler: cluster.handler }));
  assert.deepEqual(cluster.asked, ['beta n1 devtool.dev/environment=shop']);
});

test('none: said on stderr, stdout stays what --output asks for; without an endpoint domain, how to set one', async () => {
  const none = ingressCluster([]);
  const plain = success(await runCommand(['endpoints'], { env, handler: none.handler }));
  assert.deepEqual([plain.stdout, plain.stderr], ['', 'No public endpoints for environment project in namespace default\n']);
  const json = success(await runCommand(['endpoints', '-o', 'json'], { env, handler: none.handler }));
  assert.deepEqual([json.stdout, json.stderr], ['[]\n', '']);
  assert.equal(success(await runCommand(['endpoints', '-o', 'md'], { env, handler: none.handler })).stdout, '_No public endpoints._\n');
  const noDomain = success(await runCommand(['endpoints'], { handler: none.handler }));
  assert.match(noDomain.stderr, /^No public endpoints for environment project in namespace default: no endpoint domain is configured for context alpha; /);
});

test('a bad --output or an unknown context: one line, exit 2, no cluster asked', async () => {
  assert.match(failure(await runCommand(['endpoints', '-o', 'yaml']), ExitCode.usage), /--output: expected one of json, md/);
  assert.match(failure(await runCommand(['endpoints', '-c', 'gamma']), ExitCode.usage), /--context: unknown context "gamma" \(known: alpha, beta\)/);
});
