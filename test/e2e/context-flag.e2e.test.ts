/**
 * `--context` on the local cluster: a kubeconfig whose current context points at a server that
 * does not answer, and the local cluster's context beside it. A dev-container command given
 * `--context devtool-local` acts on the local cluster for that one run; without the flag it goes
 * where the current context says, and the current context is left as it was.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { parse, stringify } from 'yaml';
import { runDevtool } from './cli.ts';
import { clusterSandbox, deleteNamespace, type ClusterSandbox } from './cluster.ts';

let s: ClusterSandbox;
let project: string;

before(async () => {
  s = await clusterSandbox('context-flag');
  // The current context: a cluster nobody listens on.
  const kc = parse(readFileSync(s.kubeconfig, 'utf8')) as { clusters: unknown[]; contexts: unknown[]; users: unknown[]; 'current-context': string };
  kc.clusters.push({ name: 'nowhere', cluster: { server: 'https://127.0.0.1:1' } });
  kc.users.push({ name: 'nobody', user: { token: 'x' } });
  kc.contexts.push({ name: 'nowhere', context: { cluster: 'nowhere', user: 'nobody' } });
  kc['current-context'] = 'nowhere';
  writeFileSync(s.kubeconfig, stringify(kc), { mode: 0o600 });
  project = join(s.root, 'project');
  mkdirSync(project);
  writeFileSync(join(project, 'devtool.yml'), 'services:\n  api:\n    sync: [".:/app"]\n');
});

after(() => deleteNamespace(s));

const devtool = (args: string[]) => runDevtool(args, { env: s.env, cwd: project });

test('--context picks the local cluster for one run; without it the current context is used', () => {
  const there = devtool(['down', '--context', 'devtool-local', '-n', s.namespace]);
  assert.equal(there.code, 0, there.stderr);
  assert.match(there.stderr, new RegExp(`no dev container api was active in namespace ${s.namespace}`));

  const current = devtool(['down', '-n', s.namespace]);
  assert.equal(current.code, 1, current.stderr);
  assert.match(current.stderr, /127\.0\.0\.1:1/);

  const shown = devtool(['context', 'show']);
  assert.equal(shown.code, 0, shown.stderr);
  assert.equal((JSON.parse(shown.stdout) as { name: string }).name, 'nowhere', 'the current context is left as it was');
});
