/**
 * `devtool endpoints` on the local cluster: what it says when there is nothing to list (with no
 * endpoint domain configured, it says so and how to set one).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { before, test } from 'node:test';
import { ensureCluster } from '../../cluster/test-cluster.ts';
import { createSandbox, lines, runDevtool, type Sandbox } from './cli.ts';

let sb: Sandbox;

before(async () => {
  sb = createSandbox(readFileSync((await ensureCluster()).kubeconfigPath, 'utf8'));
});

// A namespace with nothing in it: listing its Ingresses gives none (it need not exist).
const namespace = `e2e-endpoints-none-${Date.now().toString(36)}`;

test('with no endpoint domain configured, endpoints says so and how to set one, in one line on stderr', () => {
  for (const output of [[], ['--output', 'json']]) {
    const r = runDevtool(['endpoints', '--namespace', namespace, '--name', 'web', ...output], { env: sb.env });
    assert.equal(r.code, 0, r.stderr);
    const errLines = lines(r.stderr);
    assert.equal(errLines.length, 1, r.stderr);
    assert.match(
      errLines[0]!,
      /no endpoint domain is configured for context \S+; set DEVTOOL_ENDPOINT_DOMAIN, or run 'devtool context use \S+ --endpoint-domain <domain>'/,
    );
    if (output.length > 0) assert.deepEqual(JSON.parse(r.stdout), []);
  }
  // With a domain, nothing to list is just that.
  const r = runDevtool(['endpoints', '--namespace', namespace, '--name', 'web'], { env: { ...sb.env, DEVTOOL_ENDPOINT_DOMAIN: 'apps.example.com' } });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, `No public endpoints for environment web in namespace ${namespace}\n`);
});
