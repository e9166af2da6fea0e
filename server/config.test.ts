import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { readIdleSettings, readPreviewSettings, readSessionLength, readSettings, readSleepSweepInterval } from './config.ts';

test('settings: defaults, optional announcements, the CA read from its file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-config-'));
  const ca = join(dir, 'ca.pem');
  writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
  assert.deepEqual(readSettings({ POD_NAMESPACE: 'devtool' }), {
    port: 8080,
    host: '0.0.0.0',
    namespace: 'devtool',
    objectLabels: {},
    logLevel: 'info',
    config: {
      version: readSettings({ POD_NAMESPACE: 'x' }).config.version,
      rateLimit: { max: 30, timeWindowMs: 60_000 },
      accountLoginLimit: { max: 10, timeWindowMs: 900_000 },
      pendingDeviceCodes: { total: 100, perClient: 5 },
      serviceNamespace: 'devtool',
      reservedNamespaces: [],
    },
    previews: { sweepIntervalMs: 60_000 },
    sleep: { sweepIntervalMs: 60_000 },
    namespacePolicy: { podSecurity: 'baseline' },
  });
  const s = readSettings({
    POD_NAMESPACE: 'devtool',
    PORT: '9000',
    DEVTOOL_PUBLIC_URL: 'https://devtool.example/',
    DEVTOOL_ENDPOINT_DOMAIN: 'apps.example',
    DEVTOOL_INGRESS_CLASS: 'traefik',
    DEVTOOL_REGISTRY: 'registry.example',
    DEVTOOL_BUILDER: 'tcp://buildkit:1234',
    DEVTOOL_CA_FILE: ca,
    DEVTOOL_RATE_LIMIT: '5',
    DEVTOOL_TRUSTED_PROXIES: '0',
    DEVTOOL_OBJECT_LABELS: 'devtool.dev/e2e=true, team=web,empty=',
    DEVTOOL_TRUSTED_PROXY_ADDRESSES: '10.244.0.1/32, fd00::/64',
    DEVTOOL_RESERVED_NAMESPACES: 'monitoring, istio-*',
    DEVTOOL_ACCOUNT_LOGIN_LIMIT: '4',
  });
  assert.deepEqual(s.config.trustedProxyAddresses, ['10.244.0.1/32', 'fd00::/64']);
  assert.deepEqual(s.config.reservedNamespaces, ['monitoring', 'istio-*']);
  assert.deepEqual(s.config.accountLoginLimit, { max: 4, timeWindowMs: 900_000 });
  assert.deepEqual(s.objectLabels, { 'devtool.dev/e2e': 'true', team: 'web', empty: '' });
  assert.equal(s.port, 9000);
  assert.equal(s.config.publicUrl, 'https://devtool.example');
  assert.equal(s.config.endpointDomain, 'apps.example');
  assert.equal(s.config.ingressClass, 'traefik');
  assert.equal(s.config.registry, 'registry.example');
  assert.equal(s.config.builder, 'tcp://buildkit:1234');
  assert.match(s.config.certificate ?? '', /^-----BEGIN CERTIFICATE-----/);
  assert.deepEqual(s.config.rateLimit, { max: 5, timeWindowMs: 60_000 });
  assert.equal(s.config.trustedProxies, 0);
});

test('a wrong setting is one line naming the variable', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-config-'));
  const notPem = join(dir, 'x.pem');
  writeFileSync(notPem, 'hello');
  const cases: [NodeJS.ProcessEnv, RegExp][] = [
    [{}, /^POD_NAMESPACE is not set/],
    [{ POD_NAMESPACE: 'd', PORT: 'http' }, /^PORT=http: expected a positive whole number$/],
    [
      { POD_NAMESPACE: 'd', DEVTOOL_TRUSTED_PROXY_ADDRESSES: '10.244.0.1/40' },
      /^DEVTOOL_TRUSTED_PROXY_ADDRESSES=10\.244\.0\.1\/40: "10\.244\.0\.1\/40" is not an address or CIDR/,
    ],
    [{ POD_NAMESPACE: 'd', DEVTOOL_RATE_LIMIT: '-1' }, /^DEVTOOL_RATE_LIMIT=-1: expected a positive whole number$/],
    [{ POD_NAMESPACE: 'd', DEVTOOL_TRUSTED_PROXIES: 'all' }, /^DEVTOOL_TRUSTED_PROXIES=all: expected a number of proxies/],
    [{ POD_NAMESPACE: 'd', DEVTOOL_CA_FILE: join(dir, 'missing.pem') }, /^DEVTOOL_CA_FILE=.*missing\.pem: ENOENT/],
    [{ POD_NAMESPACE: 'd', DEVTOOL_OBJECT_LABELS: 'a=1,b' }, /^DEVTOOL_OBJECT_LABELS: "b" is not a Kubernetes label/],
    [{ POD_NAMESPACE: 'd', DEVTOOL_OBJECT_LABELS: 'bad key=1' }, /^DEVTOOL_OBJECT_LABELS: "bad key=1" is not a Kubernetes label/],
    [{ POD_NAMESPACE: 'd', DEVTOOL_CA_FILE: notPem }, /^DEVTOOL_CA_FILE=.*x\.pem: not a PEM certificate$/],
    [{ POD_NAMESPACE: 'd', DEVTOOL_INGRESS_CLASS: 'Traefik_2' }, /^DEVTOOL_INGRESS_CLASS=Traefik_2: not an IngressClass name/],
  ];
  for (const [env, expected] of cases) assert.throws(() => readSettings(env), { message: expected }, JSON.stringify(env));
});

test('DEVTOOL_METRICS_TOKEN: the token /metrics asks for; none when unset or empty', () => {
  assert.equal(readSettings({ POD_NAMESPACE: 'd', DEVTOOL_METRICS_TOKEN: 'scrape-token' }).config.metricsToken, 'scrape-token');
  assert.equal(readSettings({ POD_NAMESPACE: 'd', DEVTOOL_METRICS_TOKEN: '' }).config.metricsToken, undefined);
  assert.equal(readSettings({ POD_NAMESPACE: 'd' }).config.metricsToken, undefined);
});

test('DEVTOOL_FRONT_DOOR_KEY_FILE: the key the waking page checks, read from the file; a short or missing one named', () => {
  const dir = mkdtempSync(join(tmpdir(), 'key-'));
  try {
    writeFileSync(join(dir, 'key'), `${'a'.repeat(48)}\n`);
    writeFileSync(join(dir, 'short'), 'abc');
    assert.equal(readSettings({ POD_NAMESPACE: 'd', DEVTOOL_FRONT_DOOR_KEY_FILE: join(dir, 'key') }).config.frontDoorKey, 'a'.repeat(48));
    assert.equal(readSettings({ POD_NAMESPACE: 'd' }).config.frontDoorKey, undefined);
    assert.throws(() => readSettings({ POD_NAMESPACE: 'd', DEVTOOL_FRONT_DOOR_KEY_FILE: join(dir, 'short') }), {
      message: /^DEVTOOL_FRONT_DOOR_KEY_FILE=.*short: the key is shorter than 32 characters$/,
    });
    assert.throws(() => readSettings({ POD_NAMESPACE: 'd', DEVTOOL_FRONT_DOOR_KEY_FILE: join(dir, 'none') }), {
      message: /^DEVTOOL_FRONT_DOOR_KEY_FILE=.*none: ENOENT/,
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('login settings: the sign-up policy, and a wrong mode or public URL named', () => {
  assert.equal(readSettings({ POD_NAMESPACE: 'd' }).config.signup, undefined, 'open by default');
  assert.deepEqual(readSettings({ POD_NAMESPACE: 'd', DEVTOOL_SIGNUP_MODE: 'allowList', DEVTOOL_SIGNUP_ALLOW: 'ann, bob,' }).config.signup, {
    mode: 'allowList',
    allow: ['ann', 'bob'],
  });
  assert.throws(() => readSettings({ POD_NAMESPACE: 'd', DEVTOOL_SIGNUP_MODE: 'closed' }), /DEVTOOL_SIGNUP_MODE=closed: expected open or allowList/);
  assert.throws(() => readSettings({ POD_NAMESPACE: 'd', DEVTOOL_PUBLIC_URL: 'devtool.example' }), /DEVTOOL_PUBLIC_URL=devtool.example: expected/);
});

test('the browser session length: a duration with days from 5m to 90d; unset, the default; a wrong one is one line naming it', () => {
  assert.equal(readSessionLength({}), undefined);
  assert.equal(readSessionLength({ DEVTOOL_SESSION_LENGTH: '' }), undefined);
  assert.equal(readSessionLength({ DEVTOOL_SESSION_LENGTH: '12h' }), 12 * 3_600_000);
  assert.equal(readSessionLength({ DEVTOOL_SESSION_LENGTH: ' 90m ' }), 90 * 60_000);
  assert.equal(readSessionLength({ DEVTOOL_SESSION_LENGTH: '1d12h' }), 36 * 3_600_000);
  assert.equal(readSessionLength({ DEVTOOL_SESSION_LENGTH: '5m' }), 5 * 60_000, 'the shortest');
  assert.equal(readSessionLength({ DEVTOOL_SESSION_LENGTH: '90d' }), 90 * 86_400_000, 'the longest');
  assert.equal(readSettings({ POD_NAMESPACE: 'd', DEVTOOL_SESSION_LENGTH: '7d' }).config.sessionTtlMs, 7 * 86_400_000);
  assert.equal(readSettings({ POD_NAMESPACE: 'd' }).config.sessionTtlMs, undefined, 'the default (service-deps.ts)');
  const wrong: [string, string][] = [
    ['8', 'DEVTOOL_SESSION_LENGTH=8: expected a duration with a unit, e.g. 8h, 90m or 7d'],
    ['a week', 'DEVTOOL_SESSION_LENGTH=a week: expected a duration with a unit, e.g. 8h, 90m or 7d'],
    ['2w', 'DEVTOOL_SESSION_LENGTH=2w: expected a duration with a unit, e.g. 8h, 90m or 7d'],
    ['0', 'DEVTOOL_SESSION_LENGTH=0: expected 5m to 90d'],
    ['4m59s', 'DEVTOOL_SESSION_LENGTH=4m59s: expected 5m to 90d'],
    ['91d', 'DEVTOOL_SESSION_LENGTH=91d: expected 5m to 90d'],
  ];
  for (const [text, line] of wrong) {
    assert.throws(() => readSettings({ POD_NAMESPACE: 'd', DEVTOOL_SESSION_LENGTH: text }), { message: line }, text);
  }
});

test('preview settings: the sweep interval and the stale time as durations; a wrong one names its variable', () => {
  assert.deepEqual(readPreviewSettings({}), { sweepIntervalMs: 60_000 });
  assert.deepEqual(readPreviewSettings({ DEVTOOL_PREVIEW_SWEEP_INTERVAL: '10s', DEVTOOL_PREVIEW_STALE_AFTER: '168h' }), {
    sweepIntervalMs: 10_000,
    staleAfterMs: 168 * 3_600_000,
  });
  assert.deepEqual(readPreviewSettings({ DEVTOOL_PREVIEW_STALE_AFTER: '0' }), { sweepIntervalMs: 60_000 }, '0 is never');
  assert.throws(() => readPreviewSettings({ DEVTOOL_PREVIEW_STALE_AFTER: '7' }), /^Error: DEVTOOL_PREVIEW_STALE_AFTER=7: expected a duration with a unit/);
  assert.throws(() => readPreviewSettings({ DEVTOOL_PREVIEW_SWEEP_INTERVAL: '10ms' }), /DEVTOOL_PREVIEW_SWEEP_INTERVAL=10ms: at least 1s/);
});

test('idle namespaces: off by default; durations with days; one-line errors naming the variable', () => {
  assert.deepEqual(readIdleSettings({}), {});
  assert.deepEqual(readIdleSettings({ DEVTOOL_SLEEP_AFTER_IDLE: '0', DEVTOOL_DELETE_AFTER_IDLE: '' }), {}, '0 and empty are never');
  assert.deepEqual(readIdleSettings({ DEVTOOL_SLEEP_AFTER_IDLE: '3h', DEVTOOL_DELETE_AFTER_IDLE: '14d' }), {
    sleepAfterMs: 3 * 3_600_000,
    deleteAfterMs: 14 * 86_400_000,
  });
  assert.deepEqual(readIdleSettings({ DEVTOOL_DELETE_AFTER_IDLE: '1d12h' }), { deleteAfterMs: 36 * 3_600_000 });
  assert.throws(
    () => readIdleSettings({ DEVTOOL_SLEEP_AFTER_IDLE: '3' }),
    /^Error: DEVTOOL_SLEEP_AFTER_IDLE=3: expected a duration with a unit, e.g. 3h, 90m or 14d$/,
  );
  assert.throws(() => readIdleSettings({ DEVTOOL_SLEEP_AFTER_IDLE: '2w' }), /^Error: DEVTOOL_SLEEP_AFTER_IDLE=2w: expected a duration/);
  assert.throws(() => readIdleSettings({ DEVTOOL_SLEEP_AFTER_IDLE: '30s' }), /^Error: DEVTOOL_SLEEP_AFTER_IDLE=30s: at least 1m$/);
  assert.throws(
    () => readIdleSettings({ DEVTOOL_SLEEP_AFTER_IDLE: '3h', DEVTOOL_DELETE_AFTER_IDLE: '2h' }),
    /^Error: DEVTOOL_DELETE_AFTER_IDLE=2h: must be longer than DEVTOOL_SLEEP_AFTER_IDLE=3h$/,
  );
  assert.equal(readSleepSweepInterval({}), 60_000);
  assert.equal(readSleepSweepInterval({ DEVTOOL_SLEEP_SWEEP_INTERVAL: '10s' }), 10_000);
  assert.throws(
    () => readSleepSweepInterval({ DEVTOOL_SLEEP_SWEEP_INTERVAL: '5' }),
    /^Error: DEVTOOL_SLEEP_SWEEP_INTERVAL=5: expected a duration of at least 1s/,
  );
  const base = { POD_NAMESPACE: 'devtool' };
  assert.deepEqual(readSettings({ ...base, DEVTOOL_SLEEP_AFTER_IDLE: '3h' }).config.namespaceIdle, { sleepAfterMs: 3 * 3_600_000 });
  assert.equal(readSettings(base).config.namespaceIdle, undefined);
});
