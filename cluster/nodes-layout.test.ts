/**
 * cluster/lib/nodes.sh without a cluster: the node count DEVTOOL_CLUSTER_NODES asks for (a one-line
 * error for anything else), each extra node's names and addresses, the extra nodes a state holds,
 * and local-path's node map, which keeps node 1's folder as the default.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

const state = mkdtempSync(join(tmpdir(), 'nodes-layout-'));
after(() => rmSync(state, { recursive: true, force: true }));
const libs = ['common', 'network', 'components', 'addons', 'nodes'].map((f) => `source ${JSON.stringify(join(import.meta.dirname, 'lib', `${f}.sh`))}`);

/** Runs bash with the libraries sourced on the temporary state; exit code, stdout, stderr. */
function sh(script: string, env: Record<string, string> = {}): { code: number; stdout: string; stderr: string } {
  const r = spawnSync('bash', ['-c', `set -u; ${libs.join('; ')}; ${script}`], {
    encoding: 'utf8',
    // No stdin: bash reads ~/.bashrc when its stdin is a socket (as node's pipes are), taking it for rshd.
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH, DEVTOOL_CLUSTER_STATE: state, ...env },
  });
  return { code: r.status ?? 1, stdout: r.stdout.trim(), stderr: r.stderr.trim() };
}

const host = hostname().toLowerCase();

test('DEVTOOL_CLUSTER_NODES: unset keeps the nodes there are, 1 to 9 is a count, anything else one line and exit 1', () => {
  assert.deepEqual(sh('echo "[$(wanted_nodes)]"'), { code: 0, stdout: '[]', stderr: '' });
  assert.equal(sh('wanted_nodes', { DEVTOOL_CLUSTER_NODES: '1' }).stdout, '1');
  assert.equal(sh('wanted_nodes', { DEVTOOL_CLUSTER_NODES: '9' }).stdout, '9');
  for (const bad of ['0', '10', '2x', '-1', ' 2', '02']) {
    const r = sh('wanted_nodes; echo not reached', { DEVTOOL_CLUSTER_NODES: bad });
    assert.equal(r.code, 1, bad);
    assert.equal(r.stdout, '', bad);
    assert.match(
      r.stderr,
      new RegExp(`^\\[cluster [0-9:]+\\] ERROR: DEVTOOL_CLUSTER_NODES=${bad.replace('-', '\\-')}: expected a whole number of nodes from 1 to 9$`),
      bad,
    );
  }
});

test("node k's name, address, pod range, namespace, veth and cgroup", () => {
  const r = sh(
    'for k in 2 9; do echo "$(extra_node_name $k) $(extra_node_ip $k) $(extra_pod_cidr $k) $(node_netns $k) $(node_veth $k) $(node_cgroup $k)"; done',
  );
  assert.deepEqual(r.stdout.split('\n'), [
    `${host}-2 10.246.0.2 10.245.2.0/24 devtool-node-2 dtnode-2 devtool-node-2`,
    `${host}-9 10.246.0.9 10.245.9.0/24 devtool-node-9 dtnode-9 devtool-node-9`,
  ]);
  // Every extra node's pods are outside node 1's range and inside the range of all pods.
  assert.equal(sh('echo "$POD_CIDR $EXTRA_POD_CIDR $ALL_POD_CIDR"').stdout, '10.244.0.0/16 10.245.0.0/16 10.244.0.0/15');
});

test('the extra nodes of a state are its numbered folders under nodes/, in order, found by name too', () => {
  assert.equal(sh('extra_nodes').stdout, '');
  for (const d of ['3', '2', '10', 'tmp']) mkdirSync(join(state, 'nodes', d), { recursive: true });
  assert.deepEqual(sh('extra_nodes').stdout.split('\n'), ['2', '3', '10']);
  assert.equal(sh('extra_nodes_names | xargs').stdout, `${host}-2 ${host}-3 ${host}-10`);
  assert.equal(sh(`extra_node_number ${host}-3`).stdout, '3');
  assert.equal(sh(`extra_node_number ${host}-4`).code, 1);
  assert.equal(sh(`extra_node_number ${host}`).code, 1, 'node 1 is no extra node');
  rmSync(join(state, 'nodes'), { recursive: true });
});

test("node_scope gives a function node k's pid files, logs and containerd socket, and only that function", () => {
  const r = sh('f() { eval "$(node_scope 2)"; echo "$RUN $LOGS $CONTAINERD_SOCK"; }; f; echo "$RUN"');
  assert.deepEqual(r.stdout.split('\n'), [`${state}/nodes/2/run ${state}/logs/${host}-2 ${state}/nodes/2/containerd/containerd.sock`, `${state}/run`]);
});

test("local-path's node map: node 1's folder for nodes not listed, each extra node its own", () => {
  const r = sh('LOCAL_PATH_HELPER_IMAGE=h LOCAL_PATH_IMAGE=i; local_path_manifest');
  const line = r.stdout.split('\n').find((l) => l.includes('nodePathMap'));
  assert.ok(line, r.stdout);
  const map = (JSON.parse(line) as { nodePathMap: { node: string; paths: string[] }[] }).nodePathMap;
  assert.deepEqual(map[0], { node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths: [`${state}/local-path-pv`] });
  assert.equal(map.length, 9);
  assert.deepEqual(map[1], { node: `${host}-2`, paths: [`${state}/nodes/2/local-path-pv`] });
  assert.deepEqual(map[8], { node: `${host}-9`, paths: [`${state}/nodes/9/local-path-pv`] });
});
