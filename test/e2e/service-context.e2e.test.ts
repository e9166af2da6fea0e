/**
 * Logging in to the devtool service with a token: `context use <url> --token`, `devtool context`
 * with DEVTOOL_URL + DEVTOOL_TOKEN (and DEVTOOL_CA_CERT, as a CI job trusts a private CA). The
 * service is the one its chart installed (installed-service.ts), at https://devtool.devtool.test
 * through the front door; its user is made with `npm run service:user`.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ServiceClient } from '../../src/service/client.ts';
import { createSandbox, runDevtool, type Sandbox } from './cli.ts';
import { type InstalledService, installedService } from './installed-service.ts';

const run = randomBytes(3).toString('hex');
const user = `e2ectx${run}`;
let svc: InstalledService;
let url: string;
let token: string;

const devtool = (sb: Sandbox, args: string[], env: Record<string, string> = {}) => runDevtool(args, { env: { ...sb.env, ...env } });
const contextsOf = (sb: Sandbox) => join(sb.devtoolHome, 'contexts.json');

describe('service contexts: logging in with a token, on the installed service', () => {
  before(async () => {
    svc = await installedService();
    url = svc.url;
    token = await svc.createUser(user);
  });

  after(async () => {
    await svc?.removeUsers();
  });

  test('`context use URL --token T` checks the token, stores the context 0600 and prints one line; the token is never shown', () => {
    const sb = createSandbox();
    const r = devtool(sb, ['context', 'use', url, '--token', token], { DEVTOOL_CA_CERT: svc.caFile });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `Using context ${url} as ${user}: namespace "${user}-devtool" @ ${url}\n`);
    const show = devtool(sb, ['context', 'show']);
    assert.deepEqual(JSON.parse(show.stdout), {
      name: url,
      token: 'REDACTED',
      namespace: `${user}-devtool`,
      // Builds on a service context go to its hosted builder, through the build tunnel.
      builder: `${url}/api/v1/builds/tunnel`,
      registry: 'localhost:5000',
      isDevtool: true,
    });
    const file = contextsOf(sb);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const stored = JSON.parse(readFileSync(file, 'utf8')) as {
      current: string;
      contexts: Record<string, { token?: string; userId?: string; endpointDomain?: string }>;
    };
    assert.equal(stored.current, url);
    assert.equal(stored.contexts[url]?.token, token);
    assert.equal(stored.contexts[url]?.userId, user);
    assert.equal(stored.contexts[url]?.endpointDomain, 'devtool.test');
    const printed = [r.stdout, r.stderr, show.stdout, show.stderr, readFileSync(join(sb.devtoolHome, 'devtool.log'), 'utf8')].join('\n');
    assert.equal(printed.includes(token), false, 'the token is in no output and not in devtool.log');
  });

  test('a revoked token is refused in one line and nothing is stored; another context stays current', async () => {
    const sb = createSandbox();
    const extra = await new ServiceClient({ url, token, ca: svc.caPem }).call('createToken', { body: { name: 'to revoke' } });
    await new ServiceClient({ url, token, ca: svc.caPem }).call('revokeToken', { params: { id: extra.id } });
    const r = devtool(sb, ['context', 'use', url, '--token', extra.token], { DEVTOOL_CA_CERT: svc.caFile });
    assert.equal(r.code, 1);
    assert.equal(r.stderr, `Error: token revoked or expired: log in again with devtool context use ${url}\n`);
    assert.equal(existsSync(contextsOf(sb)), false, 'nothing stored');
    assert.equal(JSON.parse(devtool(sb, ['context', 'show']).stdout).name, 'alpha', 'the kubeconfig context is still the current one');
  });

  test('--context URL: the service commands act on the service while a plain cluster stays current', () => {
    const sb = createSandbox();
    const env = { DEVTOOL_CA_CERT: svc.caFile };
    assert.equal(devtool(sb, ['context', 'use', url, '--token', token], env).code, 0);
    assert.equal(devtool(sb, ['context', 'use', 'alpha']).code, 0);
    const plain = devtool(sb, ['namespace', 'list'], env);
    assert.equal(plain.code, 3);
    assert.match(plain.stderr, /the current context "alpha" is a plain Kubernetes cluster without it .* or pass --context <URL>\n$/);

    const created = devtool(sb, ['namespace', 'create', `${user}-flag`, '--context', url], env);
    assert.equal(created.code, 0, created.stderr);
    assert.equal(created.stdout, `Namespace "${user}-flag" created\nUsing namespace "${user}-flag" @ ${url} (${url})\n`);
    // Before the command, as kubectl takes it; the service context now uses the namespace made above.
    const listed = devtool(sb, ['--context', url, 'namespace', 'list'], env);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`\\n${user}-flag \\*\\s+Active\\b`));
    // A plain user's rights stay its own whichever way the context is named.
    const users = devtool(sb, ['user', 'list', '-c', url], env);
    assert.equal(users.code, 1);
    assert.equal(users.stderr, 'Error: only admins can list users\n');
    const deleted = devtool(sb, ['namespace', 'delete', `${user}-flag`, '--context', url], env);
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.match(deleted.stdout, new RegExp(`Using namespace "${user}-devtool" @ `));

    const shown = JSON.parse(devtool(sb, ['context', 'show']).stdout) as { name: string; namespace: string };
    assert.deepEqual([shown.name, shown.namespace], ['alpha', 'default'], 'the current context is left as it was');
  });

  test('`devtool context` with DEVTOOL_URL and DEVTOOL_TOKEN logs in without a prompt', () => {
    const sb = createSandbox();
    const r = devtool(sb, ['context'], { DEVTOOL_URL: url, DEVTOOL_TOKEN: token, DEVTOOL_CA_CERT: svc.caFile });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^Using context ${url.replace(/[.]/g, '\\.')} as ${user}: namespace "${user}-devtool"`));
    assert.equal((JSON.parse(readFileSync(contextsOf(sb), 'utf8')) as { current: string }).current, url);
  });
});
