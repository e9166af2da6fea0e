/**
 * The chart's rendering (`helm template`, no cluster needed beyond the project's helm): the
 * service's Deployment, environment, probes, the CA's certificate mounted without its key, the
 * PodDisruptionBudget, the Ingress for the service host and exactly the RBAC rights the service
 * needs; a wrong value refused; the service without the chart's front door. The installed chart:
 * service-install.e2e.test.ts.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { repoRoot } from './cli.ts';
import { pathWithHelm } from './cluster.ts';

/** What the rendering test reads of the chart's objects. */
interface Rendered {
  kind: string;
  metadata: { name: string };
  rules?: unknown[];
  spec?: {
    replicas?: number;
    strategy?: { rollingUpdate?: unknown };
    template?: {
      spec: {
        containers: { env: { name: string; value?: string }[]; readinessProbe: { httpGet: { path: string } }; livenessProbe: { httpGet: { path: string } } }[];
        volumes: { name: string; secret?: { items?: unknown[] } }[];
      };
    };
    minAvailable?: number;
    ingressClassName?: string;
    rules?: { host: string }[];
  };
}

// biome-ignore lint/suspicious/noExplicitAny: rendered objects, read path by path in the builder's test
type Loose = Record<string, any>;

describe('the chart renders', () => {
  const helm = (args: string[]) => spawnSync('helm', args, { encoding: 'utf8', env: { ...process.env, PATH: pathWithHelm() } });
  const render = (...sets: string[]) => {
    const r = helm(['template', 'x', join(repoRoot, 'chart'), '--namespace', 'ns', ...sets.flatMap((s) => ['--set', s])]);
    assert.equal(r.status, 0, r.stderr);
    return r.stdout;
  };

  test('helm lint passes; the service gets its environment, the CA certificate without the key, and exactly its rights', () => {
    const lint = helm(['lint', join(repoRoot, 'chart')]);
    assert.equal(lint.status, 0, lint.stdout + lint.stderr);
    const docs = parseAllDocuments(
      render(
        'ingress.controller.image=c',
        'service.image=s',
        'service.signup.mode=allowList',
        'service.signup.allowList={ann,bob}',
        'service.kubeApiServer=https://k:6443',
        'service.sessionLength=12h',
      ),
    )
      .map((d) => d.toJS() as Rendered)
      .filter(Boolean);
    const deploy = docs.find((d) => d.kind === 'Deployment' && d.metadata.name === 'x-service')!;
    const spec = deploy.spec!;
    assert.equal(spec.replicas, 2);
    assert.deepEqual(spec.strategy?.rollingUpdate, { maxUnavailable: 0, maxSurge: 1 });
    const container = spec.template!.spec.containers[0]!;
    const env = Object.fromEntries(container.env.map((e) => [e.name, e.value ?? 'fieldRef']));
    assert.deepEqual(env, {
      POD_NAMESPACE: 'fieldRef',
      PORT: '8080',
      LOG_LEVEL: 'info',
      DEVTOOL_PUBLIC_URL: 'https://devtool.devtool.test',
      DEVTOOL_ENDPOINT_DOMAIN: 'devtool.test',
      DEVTOOL_KUBE_SERVER: 'https://k:6443',
      DEVTOOL_PREVIEW_SWEEP_INTERVAL: '1m',
      DEVTOOL_SLEEP_SWEEP_INTERVAL: '1m',
      DEVTOOL_POD_SECURITY: 'baseline',
      DEVTOOL_NAMESPACE_QUOTA: JSON.stringify({
        persistentvolumeclaims: '10',
        pods: '40',
        'requests.cpu': '4',
        'requests.memory': '8Gi',
        'requests.storage': '50Gi',
        'services.loadbalancers': '0',
        'services.nodeports': '0',
      }),
      DEVTOOL_NAMESPACE_LIMITS: JSON.stringify({ defaultRequest: { cpu: '10m', memory: '32Mi' } }),
      DEVTOOL_CA_FILE: '/etc/devtool/ca/ca.crt',
      DEVTOOL_TRUSTED_PROXIES: '1',
      DEVTOOL_TRUSTED_PROXY_ADDRESSES: '10.244.0.1/32',
      DEVTOOL_RATE_LIMIT: '30',
      DEVTOOL_ACCOUNT_LOGIN_LIMIT: '10',
      DEVTOOL_RESERVED_NAMESPACES: '',
      DEVTOOL_FRONT_DOOR_KEY_FILE: '/etc/devtool/front-door-key/key',
      DEVTOOL_SIGNUP_MODE: 'allowList',
      DEVTOOL_SIGNUP_ALLOW: 'ann,bob',
      DEVTOOL_SESSION_LENGTH: '12h',
    });
    assert.equal(container.readinessProbe.httpGet.path, '/readyz');
    assert.equal(container.livenessProbe.httpGet.path, '/healthz');
    const caVolume = spec.template!.spec.volumes.find((v) => v.name === 'ca');
    assert.deepEqual(caVolume?.secret?.items, [{ key: 'tls.crt', path: 'ca.crt' }], 'the certificate only, never the key');
    const pdb = docs.find((d) => d.kind === 'PodDisruptionBudget')!;
    assert.equal(pdb.spec?.minAvailable, 1);
    const ingress = docs.find((d) => d.kind === 'Ingress')!;
    assert.equal(ingress.spec?.ingressClassName, 'devtool');
    assert.equal(ingress.spec?.rules?.[0]?.host, 'devtool.devtool.test');
    const rules = (kind: string) => docs.find((d) => d.kind === kind && d.metadata.name === 'x-service')!.rules;
    assert.deepEqual(rules('ClusterRole'), [
      { apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'watch', 'create', 'delete', 'patch'] },
      { apiGroups: ['rbac.authorization.k8s.io'], resources: ['rolebindings'], verbs: ['get', 'create', 'delete'] },
      { apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], verbs: ['bind'], resourceNames: ['admin', 'view'] },
      { apiGroups: [''], resources: ['resourcequotas', 'limitranges'], verbs: ['get', 'create', 'update', 'delete'] },
    ]);
    assert.deepEqual(rules('Role'), [
      { apiGroups: [''], resources: ['serviceaccounts', 'secrets'], verbs: ['get', 'list', 'create', 'update', 'delete', 'patch', 'deletecollection'] },
      { apiGroups: [''], resources: ['serviceaccounts/token'], verbs: ['create'] },
    ]);
  });

  test('the front door and the service share a generated key; the front door reads Namespaces and writes only LAST_REQUEST', () => {
    const docs = parseAllDocuments(render('ingress.controller.image=c', 'service.image=s'))
      .map((d) => d.toJS() as Loose)
      .filter(Boolean);
    const secret = docs.find((d) => d['kind'] === 'Secret' && d['metadata'].name === 'x-front-door-key')!;
    assert.match(Buffer.from(secret['data'].key, 'base64').toString(), /^[A-Za-z0-9]{48}$/);
    const keyVolume = (name: string) =>
      docs
        .find((d) => ['Deployment', 'DaemonSet'].includes(d['kind']) && d['metadata'].name === name)!
        ['spec'].template.spec.volumes.find((v: Loose) => v['name'] === 'front-door-key');
    assert.deepEqual(keyVolume('x-service')?.secret, { secretName: 'x-front-door-key' });
    assert.deepEqual(keyVolume('x-front-door')?.secret, { secretName: 'x-front-door-key' });
    const containers = docs.find((d) => d['kind'] === 'DaemonSet')!['spec'].template.spec.containers as Loose[];
    const controllerEnv = Object.fromEntries(containers.find((c) => c['name'] === 'controller')!['env'].map((e: Loose) => [e['name'], e['value']]));
    assert.equal(controllerEnv['WAKING_SERVICE'], 'x-service');
    assert.equal(controllerEnv['FRONT_DOOR_KEY_FILE'], '/etc/devtool/front-door-key/key');
    assert.equal(controllerEnv['ACCESS_LOG'], '/var/log/caddy/access.log');
    const frontDoorRules = docs.find((d) => d['kind'] === 'ClusterRole' && d['metadata'].name === 'x-front-door')!['rules'];
    assert.ok(
      frontDoorRules.some((r: Loose) => r['resources'].includes('namespaces') && r['verbs'].join() === 'get,list,watch,patch'),
      JSON.stringify(frontDoorRules),
    );
    const policy = docs.find((d) => d['kind'] === 'ValidatingAdmissionPolicy' && d['metadata'].name === 'ns-front-door-namespaces')!;
    assert.equal(policy['spec'].matchConditions[0].expression, "request.userInfo.username == 'system:serviceaccount:ns:x-front-door'");
    // Without the front door, no key and no mount.
    assert.doesNotMatch(render('ingress.enabled=false', 'ingress.className=nginx', 'service.image=s'), /front-door-key/);
  });

  test('the defaults are safe: sign-up by allow-list only, no /metrics without a token, only the front door admitted to the service pods', () => {
    const docs = parseAllDocuments(render('ingress.controller.image=c', 'service.image=s'))
      .map((d) => d.toJS() as Loose)
      .filter(Boolean);
    const deploy = docs.find((d) => d['kind'] === 'Deployment' && d['metadata'].name === 'x-service')!;
    const env = new Map<string, Loose>(deploy['spec'].template.spec.containers[0].env.map((e: Loose) => [e['name'], e]));
    assert.equal(env.get('DEVTOOL_SIGNUP_MODE')?.['value'], 'allowList');
    assert.equal(env.get('DEVTOOL_SIGNUP_ALLOW')?.['value'], '');
    assert.equal(env.get('DEVTOOL_SESSION_LENGTH')?.['value'], '8h', 'a sign-in lasts 8 hours');
    assert.equal(env.has('DEVTOOL_METRICS_TOKEN'), false, 'no scraper token: the service has no /metrics');
    assert.equal(env.get('DEVTOOL_TRUSTED_PROXY_ADDRESSES')?.['value'], '10.244.0.1/32');
    const policy = docs.find((d) => d['kind'] === 'NetworkPolicy' && d['metadata'].name === 'x-service')!;
    assert.deepEqual(policy['spec'].podSelector.matchLabels, { 'app.kubernetes.io/instance': 'x', 'app.kubernetes.io/component': 'service' });
    assert.deepEqual(policy['spec'].ingress, [{ ports: [{ port: 'http', protocol: 'TCP' }], from: [{ ipBlock: { cidr: '10.244.0.1/32' } }] }]);
    // A scraper token set: kept in a Secret, the environment only names it.
    const withToken = parseAllDocuments(render('ingress.controller.image=c', 'service.image=s', 'service.metricsToken=scrape'))
      .map((d) => d.toJS() as Loose)
      .filter(Boolean);
    const secret = withToken.find((d) => d['kind'] === 'Secret' && d['metadata'].name === 'x-service-metrics')!;
    assert.equal(Buffer.from(secret['data'].token, 'base64').toString(), 'scrape');
    const tokenEnv = withToken
      .find((d) => d['kind'] === 'Deployment' && d['metadata'].name === 'x-service')!
      ['spec'].template.spec.containers[0].env.find((e: Loose) => e['name'] === 'DEVTOOL_METRICS_TOKEN');
    assert.deepEqual(tokenEnv.valueFrom, { secretKeyRef: { name: 'x-service-metrics', key: 'token' } });
  });

  test('a wrong signup mode is refused naming the value; without the front door, no CA is mounted', () => {
    const bad = helm([
      'template',
      'x',
      join(repoRoot, 'chart'),
      '--set',
      'ingress.controller.image=c',
      '--set',
      'service.image=s',
      '--set',
      'service.signup.mode=closed',
    ]);
    assert.notEqual(bad.status, 0);
    assert.match(bad.stderr, /service\.signup\.mode: "closed" is not open or allowList/);
    const off = render('ingress.enabled=false', 'ingress.className=nginx', 'service.image=s');
    assert.doesNotMatch(off, /DEVTOOL_CA_FILE|front-door-ca/);
    assert.match(off, /ingressClassName: nginx/);
    const none = render('ingress.enabled=false', 'service.enabled=false');
    assert.doesNotMatch(none, /^kind:/m);
  });

  test("behind the cluster's own controller: its class announced, the operator's Secret on the service's Ingress, the CA without a key", () => {
    const docs = parseAllDocuments(
      render('ingress.enabled=false', 'ingress.className=traefik', 'ingress.tlsSecretName=wildcard', 'service.image=s', 'ca.certificate=PEM'),
    )
      .map((d) => d.toJS() as Loose)
      .filter(Boolean);
    const env = docs.find((d) => d['kind'] === 'Deployment' && d['metadata'].name === 'x-service')!['spec'].template.spec.containers[0].env as Loose[];
    assert.deepEqual(
      env.find((e) => e['name'] === 'DEVTOOL_INGRESS_CLASS'),
      { name: 'DEVTOOL_INGRESS_CLASS', value: 'traefik' },
    );
    const ingress = docs.find((d) => d['kind'] === 'Ingress')!;
    assert.equal(ingress['spec'].ingressClassName, 'traefik');
    assert.deepEqual(ingress['spec'].tls, [{ hosts: ['devtool.devtool.test'], secretName: 'wildcard' }]);
    const ca = docs.find((d) => d['kind'] === 'Secret' && d['metadata'].name === 'x-front-door-ca')!;
    assert.deepEqual(ca['data'], { 'tls.crt': Buffer.from('PEM').toString('base64'), 'tls.key': '' });
    assert.ok(!docs.some((d) => d['kind'] === 'IngressClass'), 'no class of its own');
    // devtool's own front door, its class the default: nothing to announce, no TLS section, and a CA needs its key.
    const own = render('ingress.controller.image=c', 'service.image=s');
    assert.doesNotMatch(own, /DEVTOOL_INGRESS_CLASS|^ {2}tls:/m);
    assert.match(render('ingress.controller.image=c', 'service.image=s', 'ingress.default=false'), /DEVTOOL_INGRESS_CLASS, value: "devtool"/);
    const keyless = helm([
      'template',
      'x',
      join(repoRoot, 'chart'),
      '--set',
      'ingress.controller.image=c',
      '--set',
      'service.image=s',
      '--set',
      'ca.certificate=PEM',
    ]);
    assert.notEqual(keyless.status, 0);
    assert.match(keyless.stderr, /ca\.key is required with ca\.certificate \(the front door signs with it\)/);
  });

  // hosted builds
  test("builder.enabled: the gateway requires the service's client certificate; steps on their own network; the service gets the client side", () => {
    const off = render('ingress.controller.image=c', 'service.image=s');
    assert.doesNotMatch(off, /DEVTOOL_BUILDKIT_ADDRESS|x-builder/, 'no builder unless enabled');
    const builder = ['builder.enabled=true', 'builder.image=b', 'builder.hostNetwork=true', 'builder.insecureRegistries={localhost:5000}'];
    const text = render('ingress.controller.image=c', 'service.image=s', ...builder);
    const docs = parseAllDocuments(text)
      .map((d) => d.toJSON() as Loose)
      .filter(Boolean);
    const config = docs.find((d) => d.kind === 'ConfigMap' && d.metadata.name === 'x-builder')!.data['buildkitd.toml'] as string;
    assert.doesNotMatch(config, /grpc|tcp:/, "users' daemons listen on the gateway's unix sockets only");
    assert.match(config, /networkMode = "bridge"[^[]*bridgeSubnet = "10\.10\.0\.0\/16"/, 'build steps on their own bridge');
    assert.match(config, /\[registry\."localhost:5000"\]\s+http = true/);
    const daemon = docs.find((d) => d.kind === 'Deployment' && d.metadata.name === 'x-builder')!.spec.template.spec;
    assert.equal(daemon.hostNetwork, true);
    assert.deepEqual(daemon.containers[0].args, [
      '--listen=$(POD_IP):1235',
      '--tls-cert=/etc/buildkit/tls/tls.crt',
      '--tls-key=/etc/buildkit/tls/tls.key',
      '--tls-ca=/etc/buildkit/tls/ca.crt',
      '--config=/etc/buildkit/buildkitd.toml',
      '--root=/var/lib/buildkit/users',
      '--max-daemons=3',
      '--keep-users=6',
      '--idle=10m',
    ]);
    assert.deepEqual(
      daemon.volumes.find((v: { name: string }) => v.name === 'tls').secret.items.map((i: { key: string }) => i.key),
      ['ca.crt', 'tls.crt', 'tls.key'],
    );
    const service = docs.find((d) => d.kind === 'Deployment' && d.metadata.name === 'x-service')!.spec.template.spec;
    const env = Object.fromEntries(service.containers[0].env.map((e: { name: string; value?: string }) => [e.name, e.value]));
    assert.equal(env.DEVTOOL_BUILDKIT_ADDRESS, 'x-builder.ns.svc:1235');
    assert.equal(env.DEVTOOL_BUILDKIT_TLS_DIR, '/etc/devtool/builder');
    assert.deepEqual(
      service.volumes.find((v: { name: string }) => v.name === 'builder-tls').secret.items,
      [
        { key: 'ca.crt', path: 'ca.crt' },
        { key: 'client.crt', path: 'tls.crt' },
        { key: 'client.key', path: 'tls.key' },
      ],
      "the client certificate, never the daemon's key",
    );
    const sets = ['ingress.controller.image=c', 'service.image=s', 'builder.enabled=true'].flatMap((v) => ['--set', v]);
    const missing = helm(['template', 'x', join(repoRoot, 'chart'), ...sets]);
    assert.notEqual(missing.status, 0);
    assert.match(missing.stderr, /builder\.image is required with builder\.enabled/);
  });
});
