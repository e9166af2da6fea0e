import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { V1LimitRange, V1ResourceQuota } from '@kubernetes/client-node';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { assertGolden } from '../../test/golden.ts';
import { parseAssignments } from '../cli/assignments.ts';
import { namespaceLimitsOf } from '../kube/namespace-limits.ts';
import type { DeploymentObject } from '../kube/objects.ts';
import type { OriginalObject } from './statefulset.ts';
import { agentKeptDir, buildDevObjects, copiesAgent, syncSubPath } from './mirror.ts';
import { loadManifestText } from '../manifest/load.ts';
import type { DevService } from '../manifest/model.ts';

// Golden fixtures: testdata/<case>/{original.yaml, devtool.yml (one services entry), env.json (--env), namespace.yaml
// (optional: the namespace's ResourceQuotas and LimitRanges)} -> expected.yaml.
// UPDATE_GOLDEN=1 rewrites expected.yaml; review the diff before committing it.
const dir = join(import.meta.dirname, 'testdata');

function build(name: string, more: { agentOnClaim?: boolean; agentImage?: undefined; devtoolVersion?: string; claimUnwritable?: boolean } = {}) {
  const original = parse(readFileSync(join(dir, name, 'original.yaml'), 'utf8')) as OriginalObject;
  const file = join(dir, name, 'devtool.yml');
  const [devName, dev] = Object.entries(loadManifestText(readFileSync(file, 'utf8'), file, { cwd: dir, env: {} }).services)[0]!;
  return buildDevObjects({
    original,
    devName,
    dev,
    environment: 'shop',
    extraEnv: parseAssignments(JSON.parse(readFileSync(join(dir, name, 'env.json'), 'utf8')) as string[], '--env'),
    agentImage: 'localhost:5000/devtool-bin:0.1.0',
    folder: '0123456789abcdef',
    devtoolVersion: '0.1.0',
    hostPrivateKey: '-----BEGIN OPENSSH PRIVATE KEY-----\nHOST\n-----END OPENSSH PRIVATE KEY-----\n',
    clientPublicKey: 'ssh-ed25519 AAAACLIENT devtool',
    ...namespaceOf(name),
    ...more,
  });
}

function namespaceOf(name: string) {
  const file = join(dir, name, 'namespace.yaml');
  if (!existsSync(file)) return {};
  const objects = parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS() as { kind: string });
  return {
    namespaceLimits: namespaceLimitsOf(
      objects.filter((o): o is V1ResourceQuota & { kind: string } => o.kind === 'ResourceQuota'),
      objects.filter((o): o is V1LimitRange & { kind: string } => o.kind === 'LimitRange'),
    ),
  };
}

const asYaml = (o: ReturnType<typeof build>) =>
  [o.secret, ...(o.claim ? [o.claim] : []), o.deployment].map((x) => stringify(x, { lineWidth: 0 })).join('---\n');

for (const name of readdirSync(dir)) {
  test(`golden: ${name}`, () => {
    assertGolden(join(dir, name, 'expected.yaml'), asYaml(build(name)));
  });
}

test('golden: restricted, with no agent image (the agent copied in through the API)', () => {
  // The dev container waits in its shell, not started until the agent runs; nothing else of Pod Security "restricted" changes.
  assertGolden(join(dir, 'restricted', 'expected-copied-in.yaml'), asYaml(build('restricted', { agentImage: undefined, agentOnClaim: true })));
});

test('golden: restricted, on a claim its user cannot write (its files in an emptyDir)', () => {
  // No claim to apply, the agent neither run from nor kept on it; the rest as on the claim.
  assertGolden(join(dir, 'restricted', 'expected-unwritable-claim.yaml'), asYaml(build('restricted', { claimUnwritable: true, agentOnClaim: true })));
});

test('an unwritable claim rolls the dev pod once: the hash changes with it, and only then', () => {
  const hash = (o: ReturnType<typeof build>) => o.deployment.metadata.annotations?.['devtool.dev/dev-spec-hash'];
  const onClaim = build('restricted');
  const unwritable = build('restricted', { claimUnwritable: true });
  assert.notEqual(hash(unwritable), hash(onClaim));
  assert.equal(hash(build('restricted', { claimUnwritable: true })), hash(unwritable));
  // Without a claim in the manifest there is none to find unwritable: nothing changes.
  assert.equal(hash(build('novolume', { claimUnwritable: true })), hash(build('novolume')));
});

test('the original object is not modified', () => {
  const original = parse(readFileSync(join(dir, 'sidecar', 'original.yaml'), 'utf8')) as DeploymentObject;
  const before = JSON.stringify(original);
  buildDevObjects({
    original,
    devName: 'api',
    dev: service({ container: 'api' }),
    environment: 'shop',
    extraEnv: {},
    agentImage: 'i',
    folder: 'f',
    devtoolVersion: '0.1.0',
    hostPrivateKey: 'h',
    clientPublicKey: 'c',
  });
  assert.equal(JSON.stringify(original), before);
});

test('a missing container is named with the ones that exist', () => {
  const original = parse(readFileSync(join(dir, 'sidecar', 'original.yaml'), 'utf8')) as DeploymentObject;
  assert.throws(
    () =>
      buildDevObjects({
        original,
        devName: 'api',
        dev: service({ container: 'nope' }),
        environment: 'shop',
        extraEnv: {},
        agentImage: 'i',
        folder: 'f',
        devtoolVersion: '0.1.0',
        hostPrivateKey: 'h',
        clientPublicKey: 'c',
      }),
    /no container "nope" \(it has proxy, api\)/,
  );
});

test('the spec hash follows the dev spec', () => {
  const a = build('minimal').deployment.metadata.annotations!['devtool.dev/dev-spec-hash'];
  const b = build('minimal').deployment.metadata.annotations!['devtool.dev/dev-spec-hash'];
  assert.equal(a, b);
  const original = parse(readFileSync(join(dir, 'minimal', 'original.yaml'), 'utf8')) as DeploymentObject;
  const c = buildDevObjects({
    original,
    devName: 'web',
    dev: service({ image: 'nginx:2' }),
    environment: 'shop',
    extraEnv: {},
    agentImage: 'localhost:5000/devtool-bin:0.1.0',
    folder: 'f',
    devtoolVersion: '0.1.0',
    hostPrivateKey: 'h',
    clientPublicKey: 'c',
  });
  assert.notEqual(c.deployment.metadata.annotations!['devtool.dev/dev-spec-hash'], a);
});

test("the dev Deployment records the CLI's version, and another version's dev pod rolls even with the agent copied in", () => {
  const hash = (o: ReturnType<typeof build>) => [
    o.deployment.metadata.annotations!['devtool.dev/dev-spec-hash'],
    o.deployment.spec?.template.metadata?.annotations?.['devtool.dev/dev-spec-hash'],
  ];
  const older = build('minimal', { agentImage: undefined });
  const newer = build('minimal', { agentImage: undefined, devtoolVersion: '0.2.0' });
  assert.equal(older.deployment.metadata.annotations!['devtool.dev/dev-version'], '0.1.0');
  assert.equal(newer.deployment.metadata.annotations!['devtool.dev/dev-version'], '0.2.0');
  // The pod template's own annotation changes too: that is what makes Kubernetes replace the pod.
  assert.notEqual(hash(newer)[1], hash(older)[1]);
  assert.equal(hash(newer)[0], hash(newer)[1]);
});

test('the agent contract carries the keys and nothing the agent would reject', () => {
  const o = build('minimal');
  const agentConfig = JSON.parse(Buffer.from(o.secret.data!['agent.json']!, 'base64').toString()) as Record<string, unknown>;
  assert.deepEqual(Object.keys(agentConfig), ['version', 'ssh']);
  assert.deepEqual((agentConfig.ssh as { authorizedKeys: string[] }).authorizedKeys, ['ssh-ed25519 AAAACLIENT devtool']);
  assert.equal(syncSubPath('/usr/src/app/'), 'sync_usr_src_app');
});

function service(over: Partial<DevService>): DevService {
  return {
    command: ['sh'],
    sync: [],
    syncOutsideProject: false,
    trustContainer: false,
    forward: [],
    reverse: [],
    environment: {},
    resources: { requests: {}, limits: {} },
    selector: {},
    persistentVolume: { enabled: true, size: '5Gi' },
    autocreate: false,
    ...over,
  };
}

test('a claim that already holds the agent: no init container, the kept copy mounted read-only, another spec hash', () => {
  const first = build('minimal');
  const cached = build('minimal', { agentOnClaim: true });
  assert.equal(copiesAgent(first.deployment), true);
  assert.equal(copiesAgent(cached.deployment), false);
  const mountOf = (o: ReturnType<typeof build>) => o.deployment.spec!.template.spec!.containers[0]!.volumeMounts!.find((m) => m.mountPath === '/devtool/bin');
  const kept = agentKeptDir('localhost:5000/devtool-bin:0.1.0');
  assert.deepEqual(mountOf(cached), { name: 'devtool-data', subPath: `state/${kept}`, mountPath: '/devtool/bin', readOnly: true });
  assert.deepEqual(mountOf(first), { name: 'devtool-bin', mountPath: '/devtool/bin' });
  const commandOf = (o: ReturnType<typeof build>) => o.deployment.spec!.template.spec!.containers[0]!.command;
  assert.deepEqual(commandOf(first), ['/devtool/bin/devtool-agent', 'supervise', '--no-syncthing']);
  assert.deepEqual(commandOf(cached), commandOf(first));
  const keepOf = (o: ReturnType<typeof build>) => o.deployment.spec!.template.spec!.containers[0]!.env!.find((e) => e.name === 'DEVTOOL_KEEP_BINARIES')?.value;
  assert.equal(keepOf(first), `/var/devtool/${kept}`, 'the agent copies itself onto the claim');
  assert.equal(keepOf(cached), undefined);
  assert.equal(
    cached.deployment.spec!.template.spec!.volumes!.some((v) => v.name === 'devtool-bin'),
    false,
  );
  const hash = (o: ReturnType<typeof build>) => o.deployment.metadata.annotations!['devtool.dev/dev-spec-hash'];
  assert.notEqual(hash(cached), hash(first), 'switching rolls the pod');
  assert.notEqual(
    agentKeptDir('localhost:5000/devtool-bin:0.1.0'),
    agentKeptDir('localhost:5000/devtool-bin:0.1.1'),
    'a new agent build gets a directory of its own',
  );
});

test('without a claim the agent is always copied, into an emptyDir', () => {
  const o = build('novolume', { agentOnClaim: true });
  assert.equal(o.claim, undefined);
  assert.equal(copiesAgent(o.deployment), true);
  assert.ok(o.deployment.spec!.template.spec!.volumes!.some((v) => v.name === 'devtool-bin' && v.emptyDir));
  assert.ok(!o.deployment.spec!.template.spec!.containers[0]!.env!.some((e) => e.name === 'DEVTOOL_KEEP_BINARIES'));
  assert.deepEqual(
    o.deployment.metadata.annotations!['devtool.dev/dev-spec-hash'],
    build('novolume').deployment.metadata.annotations!['devtool.dev/dev-spec-hash'],
  );
});
