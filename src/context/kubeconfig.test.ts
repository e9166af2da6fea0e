import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { parse } from 'yaml';
import { kubeconfigPaths, loadKubeconfig, updateKubeconfigContext, writeKubeconfigEntry } from './kubeconfig.ts';

const root = mkdtempSync(join(tmpdir(), 'devtool-kubeconfig-test-'));
after(() => rmSync(root, { recursive: true, force: true }));

let n = 0;
function dir(): string {
  return mkdtempSync(join(root, `case${n++}-`));
}

const FIRST = `# first file: the team cluster
apiVersion: v1
kind: Config
current-context: alpha
clusters:
- name: alpha-cluster
  cluster:
    server: https://alpha.invalid:6443
- name: shared-cluster
  cluster:
    server: https://shared-from-first.invalid
contexts:
- name: alpha
  context:
    cluster: alpha-cluster
    user: alpha-user
    namespace: team   # the team's namespace
- name: shared
  context:
    cluster: shared-cluster
    user: nobody
users:
- name: alpha-user
  user:
    token: alpha-token
`;

const SECOND = `apiVersion: v1
kind: Config
current-context: beta
clusters:
- name: beta-cluster
  cluster:
    server: https://beta.invalid:6443
- name: shared-cluster
  cluster:
    server: https://shared-from-second.invalid
contexts:
# beta comes from the second file
- name: beta
  context:
    cluster: beta-cluster
    user: beta-user
- name: shared
  context:
    cluster: beta-cluster
    user: beta-user
    namespace: from-second
users:
- name: beta-user
  user:
    client-certificate-data: Zm9v
    client-key-data: YmFy
`;

function twoFiles() {
  const d = dir();
  const first = join(d, 'first.yaml');
  const second = join(d, 'second.yaml');
  writeFileSync(first, FIRST, { mode: 0o600 });
  writeFileSync(second, SECOND, { mode: 0o644 });
  chmodSync(first, 0o600);
  chmodSync(second, 0o644);
  return { first, second, env: { KUBECONFIG: [first, second].join(delimiter), HOME: d } };
}

test('kubeconfigPaths: the KUBECONFIG list, else ~/.kube/config of HOME', () => {
  assert.deepEqual(kubeconfigPaths({ KUBECONFIG: ['/a', '', '/b'].join(delimiter), HOME: '/home/x' }), ['/a', '/b']);
  assert.deepEqual(kubeconfigPaths({ HOME: '/home/x' }), ['/home/x/.kube/config']);
  assert.deepEqual(kubeconfigPaths({ KUBECONFIG: '', HOME: '/home/x' }), ['/home/x/.kube/config']);
});

test('merges files: first file wins per name and for current-context', async () => {
  const { first, second, env } = twoFiles();
  const kc = await loadKubeconfig(env);
  assert.deepEqual(kc.files, [first, second]);
  assert.equal(kc.currentContext, 'alpha');
  assert.deepEqual(
    kc.contexts.map((c) => c.name),
    ['alpha', 'shared', 'beta'],
  );
  const byName = Object.fromEntries(kc.contexts.map((c) => [c.name, c]));
  assert.deepEqual(byName.alpha, {
    name: 'alpha',
    cluster: 'alpha-cluster',
    user: 'alpha-user',
    namespace: 'team',
    server: 'https://alpha.invalid:6443',
    hasCredentials: true,
    file: first,
  });
  // "shared" is defined by both files: the first one's definition wins, cluster included.
  assert.equal(byName.shared!.file, first);
  assert.equal(byName.shared!.namespace, undefined);
  assert.equal(byName.shared!.server, 'https://shared-from-first.invalid');
  assert.equal(byName.shared!.hasCredentials, false, 'user "nobody" is not defined anywhere');
  assert.equal(byName.beta!.file, second);
  assert.equal(byName.beta!.server, 'https://beta.invalid:6443');
  assert.equal(byName.beta!.hasCredentials, true, 'client certificates are credentials');
});

test('the first file without current-context defers to the next one', async () => {
  const { first, second } = twoFiles();
  writeFileSync(first, FIRST.replace('current-context: alpha\n', ''));
  const kc = await loadKubeconfig({ KUBECONFIG: [first, second].join(delimiter) });
  assert.equal(kc.currentContext, 'beta');
});

test('missing files in KUBECONFIG are skipped; a broken one is an error naming it', async () => {
  const { first } = twoFiles();
  const d = dir();
  const kc = await loadKubeconfig({ KUBECONFIG: [join(d, 'missing.yaml'), first].join(delimiter) });
  assert.deepEqual(
    kc.contexts.map((c) => c.name),
    ['alpha', 'shared'],
  );
  const none = await loadKubeconfig({ KUBECONFIG: join(d, 'missing.yaml') });
  assert.deepEqual(none.contexts, []);
  assert.equal(none.currentContext, undefined);

  const broken = join(d, 'broken.yaml');
  writeFileSync(broken, 'contexts: [\n  - name: x\n');
  await assert.rejects(loadKubeconfig({ KUBECONFIG: broken }), (err: Error) => err.message.startsWith(`${broken}:`) && /invalid kubeconfig/.test(err.message));
});

test('updateKubeconfigContext writes only the file defining the context, keeping everything else', async () => {
  const { first, second, env } = twoFiles();
  const firstBefore = readFileSync(first, 'utf8');
  const file = await updateKubeconfigContext(env, 'beta', { namespace: 'dev' });
  assert.equal(file, second);
  assert.equal(readFileSync(first, 'utf8'), firstBefore, 'the first file is untouched');

  const text = readFileSync(second, 'utf8');
  assert.match(text, /# beta comes from the second file/);
  const data = parse(text);
  assert.deepEqual(data.contexts, [
    { name: 'beta', context: { cluster: 'beta-cluster', user: 'beta-user', namespace: 'dev' } },
    { name: 'shared', context: { cluster: 'beta-cluster', user: 'beta-user', namespace: 'from-second' } },
  ]);
  assert.deepEqual(data.users, parse(SECOND).users);
  assert.deepEqual(data.clusters, parse(SECOND).clusters);
  assert.equal(data['current-context'], 'beta', 'without makeCurrent the current-context is kept');
  assert.equal(statSync(second).mode & 0o777, 0o644);

  const kc = await loadKubeconfig(env);
  assert.equal(kc.contexts.find((c) => c.name === 'beta')!.namespace, 'dev');
  assert.equal(kc.currentContext, 'alpha');
});

test('makeCurrent writes current-context to the first file', async () => {
  const { first, second, env } = twoFiles();
  await updateKubeconfigContext(env, 'beta', { namespace: 'dev', makeCurrent: true });
  const firstData = parse(readFileSync(first, 'utf8'));
  assert.equal(firstData['current-context'], 'beta');
  assert.deepEqual(
    firstData.contexts.map((c: { name: string }) => c.name),
    ['alpha', 'shared'],
    'the first file keeps its own contexts',
  );
  assert.match(readFileSync(first, 'utf8'), /# first file: the team cluster/);
  assert.match(readFileSync(first, 'utf8'), /# the team's namespace/);
  assert.equal(statSync(first).mode & 0o777, 0o600);
  assert.equal(statSync(second).mode & 0o777, 0o644);
  assert.equal((await loadKubeconfig(env)).currentContext, 'beta');
});

test('a context of the first file is updated in place, comments kept', async () => {
  const { first, second, env } = twoFiles();
  const secondBefore = readFileSync(second, 'utf8');
  assert.equal(await updateKubeconfigContext(env, 'alpha', { namespace: 'other', makeCurrent: true }), first);
  const text = readFileSync(first, 'utf8');
  assert.match(text, /# first file: the team cluster/);
  const data = parse(text);
  assert.equal(data.contexts[0].context.namespace, 'other');
  assert.equal(data.contexts[1].name, 'shared');
  assert.equal(data['current-context'], 'alpha');
  assert.equal(readFileSync(second, 'utf8'), secondBefore);
});

test('makeCurrent creates the first file when it does not exist yet', async () => {
  const { second } = twoFiles();
  const d = dir();
  const newFirst = join(d, 'new.yaml');
  const env = { KUBECONFIG: [newFirst, second].join(delimiter) };
  assert.equal(await updateKubeconfigContext(env, 'beta', { makeCurrent: true }), second);
  assert.ok(existsSync(newFirst));
  assert.equal(parse(readFileSync(newFirst, 'utf8'))['current-context'], 'beta');
  assert.equal(statSync(newFirst).mode & 0o777, 0o600);
});

test('the file mode is kept whatever the umask', async () => {
  const { second, env } = twoFiles();
  chmodSync(second, 0o664);
  const old = process.umask(0o077);
  try {
    await updateKubeconfigContext(env, 'beta', { namespace: 'dev' });
  } finally {
    process.umask(old);
  }
  assert.equal(statSync(second).mode & 0o777, 0o664);
});

test('a context with no context body gets one; an unknown context is an error', async () => {
  const d = dir();
  const file = join(d, 'config');
  writeFileSync(file, 'apiVersion: v1\nkind: Config\ncontexts:\n- name: bare\n');
  assert.equal(await updateKubeconfigContext({ KUBECONFIG: file }, 'bare', { namespace: 'ns1' }), file);
  assert.deepEqual(parse(readFileSync(file, 'utf8')).contexts, [{ name: 'bare', context: { namespace: 'ns1' } }]);
  await assert.rejects(updateKubeconfigContext({ KUBECONFIG: file }, 'nope', { namespace: 'x' }), /context "nope" is not in the kubeconfig/);
});

test('a service context entry: cluster with its CA, an exec credential plugin, the context made current; written again in place', async () => {
  const d = dir();
  const first = join(d, 'first');
  writeFileSync(first, FIRST, { mode: 0o640 });
  const env = { KUBECONFIG: first };
  const entry = {
    name: 'devtool_example',
    server: 'https://k8s.example:6443',
    certificateAuthority: 'PEM',
    namespace: 'alice-devtool',
    exec: { command: '/usr/bin/node', args: ['/opt/devtool.cjs', 'kubetoken', '--context', 'https://devtool.example'], env: [] },
  };
  assert.equal(await writeKubeconfigEntry(env, entry), first);
  await writeKubeconfigEntry(env, { ...entry, namespace: 'shop' });
  const text = readFileSync(first, 'utf8');
  assert.match(text, /^# first file: the team cluster/, 'comments kept');
  const data = parse(text);
  assert.equal(data['current-context'], 'devtool_example');
  assert.deepEqual(data.clusters.at(-1), {
    name: 'devtool_example',
    cluster: { server: 'https://k8s.example:6443', 'certificate-authority-data': Buffer.from('PEM').toString('base64') },
  });
  assert.deepEqual(data.users.at(-1), {
    name: 'devtool_example',
    user: {
      exec: {
        apiVersion: 'client.authentication.k8s.io/v1',
        command: '/usr/bin/node',
        args: ['/opt/devtool.cjs', 'kubetoken', '--context', 'https://devtool.example'],
        env: null,
        interactiveMode: 'Never',
        provideClusterInfo: false,
      },
    },
  });
  assert.deepEqual(
    data.contexts.filter((c: { name: string }) => c.name === 'devtool_example'),
    [{ name: 'devtool_example', context: { cluster: 'devtool_example', user: 'devtool_example', namespace: 'shop' } }],
    'one entry, replaced',
  );
  assert.equal(data.contexts.length, 3, 'the other contexts are kept');
  assert.equal(statSync(first).mode & 0o777, 0o640, 'its mode kept');
  const fresh = join(d, 'new-config');
  await writeKubeconfigEntry({ KUBECONFIG: fresh }, entry);
  assert.equal(statSync(fresh).mode & 0o777, 0o600, 'a new file holds credentials settings: 0600');
  assert.equal(parse(readFileSync(fresh, 'utf8')).contexts[0].context.namespace, 'alice-devtool');
  // kubectl reads YAML 1.1: a plain 127_0_0_1_8080 would be a number there.
  await writeKubeconfigEntry({ KUBECONFIG: fresh }, { ...entry, name: '127_0_0_1_8080' });
  const written = readFileSync(fresh, 'utf8');
  assert.match(written, /^ *- name: "127_0_0_1_8080"$/m);
  assert.match(written, /^current-context: "?127_0_0_1_8080"?$/m);
});
