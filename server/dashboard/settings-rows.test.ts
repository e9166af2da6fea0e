/** The admin page's settings table from the service's config: every setting named, no secret shown. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ServiceConfig } from '../service-deps.ts';
import { duration, settingsRows } from './settings-rows.ts';

const BARE: ServiceConfig = { version: '1.2.3', rateLimit: { max: 30, timeWindowMs: 60_000 } };
const setting = (c: ServiceConfig, name: string) => settingsRows(c).find((r) => r.name === name)?.value;

describe('settingsRows', () => {
  test('a bare config: the defaults the service runs with, said as such', () => {
    assert.deepEqual(Object.fromEntries(settingsRows(BARE).map((r) => [r.name, r.value])), {
      Version: '1.2.3',
      'Public URL': 'not set (the address each request came to)',
      'Endpoint domain': 'not set (no endpoints)',
      'Ingress class': "not set (the cluster's default)",
      Registry: 'not set',
      Builder: 'not set',
      'Hosted builds (BuildKit)': 'not set (no hosted builds)',
      'Pipeline runner image': 'not set (no pipelines)',
      'Sign-up': 'open to anyone',
      'Browser session length': '8h',
      'Rate limit (login and token routes, per address)': '30 per 1m',
      'Failed sign-ins per account': 'no limit',
      'Device codes waiting': 'no limit',
      'Reserved namespaces': 'kube-*, default',
      'Idle namespaces sleep after': 'never',
      'Idle namespaces are deleted after': 'never',
      'Trusted proxies': '1',
      'CA certificate handed out': 'not set',
      'Metrics token': 'not set (no /metrics)',
    });
  });

  test("the chart's settings, each where it belongs", () => {
    const c: ServiceConfig = {
      ...BARE,
      publicUrl: 'https://devtool.example.com',
      endpointDomain: 'apps.example.com',
      ingressClass: 'nginx',
      registry: 'registry.example.com:5000',
      builder: 'buildkit',
      runnerImage: 'registry.example.com/runner:1',
      buildkit: { host: 'buildkitd', port: 1234, tls: { ca: 'CA', cert: 'CERT', key: 'KEY', servername: 'buildkitd' } },
      signup: { mode: 'allowList', allow: ['ann', 'bob'] },
      sessionTtlMs: 90 * 60_000,
      accountLoginLimit: { max: 10, timeWindowMs: 15 * 60_000 },
      pendingDeviceCodes: { total: 100, perClient: 5 },
      serviceNamespace: 'devtool',
      reservedNamespaces: ['monitoring', 'team-*'],
      namespaceIdle: { sleepAfterMs: 3 * 3600_000, deleteAfterMs: 14 * 86_400_000 + 12 * 3600_000 },
      trustedProxies: 2,
      trustedProxyAddresses: ['10.0.0.0/8'],
    };
    assert.equal(setting(c, 'Public URL'), 'https://devtool.example.com');
    assert.equal(setting(c, 'Endpoint domain'), 'apps.example.com');
    assert.equal(setting(c, 'Ingress class'), 'nginx');
    assert.equal(setting(c, 'Registry'), 'registry.example.com:5000');
    assert.equal(setting(c, 'Builder'), 'buildkit');
    assert.equal(setting(c, 'Hosted builds (BuildKit)'), 'buildkitd:1234, mutual TLS');
    assert.equal(setting(c, 'Pipeline runner image'), 'registry.example.com/runner:1');
    assert.equal(setting(c, 'Sign-up'), 'allow list: ann, bob');
    assert.equal(setting(c, 'Browser session length'), '1h30m');
    assert.equal(setting(c, 'Failed sign-ins per account'), '10 per 15m');
    assert.equal(setting(c, 'Device codes waiting'), '100 in all, 5 per address');
    assert.equal(setting(c, 'Reserved namespaces'), 'devtool, monitoring, team-*, kube-*, default');
    assert.equal(setting(c, 'Idle namespaces sleep after'), '3h');
    assert.equal(setting(c, 'Idle namespaces are deleted after'), '14d12h');
    assert.equal(setting(c, 'Trusted proxies'), '2 from 10.0.0.0/8');
    assert.equal(setting(c, 'Sign-up'), 'allow list: ann, bob');
  });

  test('secrets: only whether they are set, never their value', () => {
    const c: ServiceConfig = {
      ...BARE,
      metricsToken: 'metrics-secret-value',
      certificate: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----',
      buildkit: { host: 'b', port: 1, tls: { ca: 'CA-PEM', cert: 'CERT-PEM', key: 'KEY-PEM', servername: 'b' } },
    };
    const rows = settingsRows(c);
    assert.equal(setting(c, 'Metrics token'), 'set');
    assert.equal(setting(c, 'CA certificate handed out'), 'set');
    const text = JSON.stringify(rows);
    for (const secret of ['metrics-secret-value', 'MIIB', 'KEY-PEM', 'CERT-PEM', 'CA-PEM']) assert.ok(!text.includes(secret), secret);
  });

  test('an allow list with nobody on it says so', () => {
    assert.equal(setting({ ...BARE, signup: { mode: 'allowList', allow: [] } }, 'Sign-up'), 'allow list: nobody');
  });

  test('duration: days, hours, minutes; seconds only under a minute', () => {
    assert.deepEqual(
      [duration(0), duration(30_000), duration(60_000), duration(8 * 3600_000), duration(86_400_000 + 60_000)],
      ['0m', '30s', '1m', '8h', '1d1m'],
    );
  });
});
