/**
 * Logging in to a real devtool service with a token: `context use <url> --token`, `devtool context`
 * with DEVTOOL_URL + DEVTOOL_TOKEN. The service is the built program (`serve`) on the local cluster,
 * its users made by its operator command `create-user`.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { ensureCluster } from '../../cluster/test-cluster.ts';
import { ServiceClient } from '../../src/service/client.ts';
import { createSandbox, runDevtool, type Sandbox } from './cli.ts';
import { E2E_NAMESPACE_LABEL } from './cluster.ts';
import { createUser, type RunningService, startService } from './service.ts';

const run = randomBytes(3).toString('hex');
const serviceNs = `e2e-ctx-${run}`;
const user = `e2ectx${run}`;
let core: k8s.CoreV1Api;
let service: RunningService;
let token: string;

const devtool = (sb: Sandbox, args: string[], env: Record<string, string> = {}) => runDevtool(args, { env: { ...sb.env, ...env } });
const contextsOf = (sb: Sandbox) => join(sb.devtoolHome, 'contexts.json');

describe('service contexts: logging in with a token', () => {
  before(async () => {
    const { kubeconfigPath } = await ensureCluster();
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(kubeconfigPath);
    core = kc.makeApiClient(k8s.CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: serviceNs, labels: { [E2E_NAMESPACE_LABEL]: 'true' } } } });
    const env = {
      KUBECONFIG: kubeconfigPath,
      POD_NAMESPACE: serviceNs,
      DEVTOOL_OBJECT_LABELS: `${E2E_NAMESPACE_LABEL}=true`,
      DEVTOOL_REGISTRY: 'localhost:5000',
      DEVTOOL_ENDPOINT_DOMAIN: 'ctx.e2e.example',
    };
    service = await startService({ ...env, DEVTOOL_PUBLIC_URL: 'https://devtool.ctx.example' });
    const made = createUser(env, user);
    assert.equal(made.status, 0, made.stderr);
    token = made.token;
  });

  after(async () => {
    await service?.stop();
    if (!core) return;
    for (const ns of (await core.listNamespace()).items) {
      const name = ns.metadata!.name!;
      if (name.includes(run)) await core.deleteNamespace({ name }).catch(() => {});
    }
  });

  test('`context use URL --token T` checks the token, stores the context 0600 and prints one line; the token is never shown', () => {
    const sb = createSandbox();
    const r = devtool(sb, ['context', 'use', service.url, '--token', token]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `Using context ${service.url} as ${user}: namespace "${user}-devtool" @ ${service.url}\n`);
    const show = devtool(sb, ['context', 'show']);
    assert.deepEqual(JSON.parse(show.stdout), {
      name: service.url,
      token: 'REDACTED',
      namespace: `${user}-devtool`,
      builder: 'docker',
      registry: 'localhost:5000',
      isDevtool: true,
    });
    const file = contextsOf(sb);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const stored = JSON.parse(readFileSync(file, 'utf8')) as {
      current: string;
      contexts: Record<string, { token?: string; userId?: string; endpointDomain?: string }>;
    };
    assert.equal(stored.current, service.url);
    assert.equal(stored.contexts[service.url]?.token, token);
    assert.equal(stored.contexts[service.url]?.userId, user);
    assert.equal(stored.contexts[service.url]?.endpointDomain, 'ctx.e2e.example');
    const printed = [r.stdout, r.stderr, show.stdout, show.stderr, readFileSync(join(sb.devtoolHome, 'devtool.log'), 'utf8')].join('\n');
    assert.equal(printed.includes(token), false, 'the token is in no output and not in devtool.log');
  });

  test('a revoked token is refused in one line and nothing is stored; another context stays current', async () => {
    const sb = createSandbox();
    const extra = await new ServiceClient({ url: service.url, token }).createToken({ name: 'to revoke' });
    await new ServiceClient({ url: service.url, token }).revokeToken(extra.id);
    const r = devtool(sb, ['context', 'use', service.url, '--token', extra.token]);
    assert.equal(r.code, 1);
    assert.equal(r.stderr, 'Error: token revoked or expired: log in again with devtool context use https://devtool.ctx.example\n');
    assert.equal(existsSync(contextsOf(sb)), false, 'nothing stored');
    assert.equal(JSON.parse(devtool(sb, ['context', 'show']).stdout).name, 'alpha', 'the kubeconfig context is still the current one');
  });

  test('`devtool context` with DEVTOOL_URL and DEVTOOL_TOKEN logs in without a prompt', () => {
    const sb = createSandbox();
    const r = devtool(sb, ['context'], { DEVTOOL_URL: service.url, DEVTOOL_TOKEN: token });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^Using context ${service.url.replace(/[.]/g, '\\.')} as ${user}: namespace "${user}-devtool"`));
    assert.equal((JSON.parse(readFileSync(contextsOf(sb), 'utf8')) as { current: string }).current, service.url);
  });
});
