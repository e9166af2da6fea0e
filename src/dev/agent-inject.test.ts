import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { DevtoolError } from '../base/errors.ts';
import type { ExecCapture } from '../kube/exec.ts';
import { AgentCopies, COPIED_LINE, type AgentCopyApi } from './agent-inject.ts';
import { AGENT_PATH, waitingForAgent } from './mirror.ts';

const NO_SHELL = 'failed to create containerd task: exec: "/bin/sh": stat /bin/sh: no such file or directory: unknown';

function pod(name: string, spec: string, reason?: string): V1Pod {
  return {
    metadata: { name, annotations: { 'devtool.dev/dev-spec-hash': spec } },
    spec: { containers: [{ name: 'api', image: 'scratch-app:1', command: waitingForAgent([AGENT_PATH, 'supervise']) }] },
    status: {
      containerStatuses: [
        {
          name: 'api',
          image: 'scratch-app:1',
          imageID: '',
          ready: false,
          restartCount: 0,
          state: reason ? { waiting: { reason, message: NO_SHELL } } : { waiting: { reason: 'ContainerCreating' } },
        },
      ],
    },
  };
}

/** A dev pod whose shell runs and waits for the agent (its startup probe not passed yet). */
function waitingPod(name: string, spec = 'h'): V1Pod {
  const p = pod(name, spec);
  p.spec!.nodeName = 'node-1';
  p.status!.containerStatuses![0]!.state = { running: {} };
  p.status!.containerStatuses![0]!.started = false;
  return p;
}

interface Exec {
  pod: string;
  container: string;
  command: string[];
  input?: Buffer;
}

/** An in-memory cluster: the Node's architecture (undefined: not readable), and every exec recorded. */
function fakeCluster(o: { nodeArch?: string; uname?: string; fail?: string } = {}): AgentCopyApi & { execs: Exec[] } {
  const execs: Exec[] = [];
  return {
    execs,
    nodeArch: async () => o.nodeArch,
    exec: async (pod, container, command, inputPath): Promise<ExecCapture> => {
      execs.push({ pod, container, command, ...(inputPath ? { input: readFileSync(inputPath) } : {}) });
      if (command[0] === 'uname') return { code: 0, stdout: Buffer.from(`${o.uname ?? 'x86_64'}\n`), stderr: '', truncated: false };
      if (o.fail) return { code: 3, stdout: Buffer.alloc(0), stderr: `${o.fail}\n`, truncated: false };
      return { code: 0, stdout: Buffer.from('sha256\n'), stderr: '', truncated: false };
    },
  };
}

/** The two programs of a source checkout, or (bundle) a release's host bundle alone. */
function programsIn(o: { bundle?: boolean } = {}): { agent: string; syncthing?: string; looked: string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'devtool-programs-'));
  const agent = join(dir, o.bundle ? 'devtool-host' : 'devtool-agent');
  writeFileSync(agent, 'the agent');
  if (o.bundle) return { agent, looked: [] };
  const syncthing = join(dir, 'syncthing');
  writeFileSync(syncthing, 'syncthing itself');
  return { agent, syncthing, looked: [] };
}

function copies(cluster: AgentCopyApi = fakeCluster(), programs = programsIn(), said: string[] = []): AgentCopies {
  return new AgentCopies({
    cluster,
    programs: async (arch) => {
      programs.looked.push(arch);
      return programs;
    },
    context: 'team',
    log: () => undefined,
    copied: (line) => said.push(line),
  });
}

/** Lets the copies started by offer() run. */
const settle = () => new Promise((r) => setTimeout(r, 50));

test('a dev image without a shell is refused in one line naming what to set', () => {
  assert.throws(
    () => copies().offer([pod('api-1', 'h', 'RunContainerError')], 'h'),
    (err: Error) =>
      err instanceof DevtoolError &&
      err.message ===
        'the dev image scratch-app:1 has no shell (/bin/sh), so the agent cannot be copied into it through the Kubernetes API: set ' +
          "DEVTOOL_BIN_IMAGE to a devtool-bin image the cluster can pull, or give the context a registry ('devtool context use team --registry HOST')",
  );
});

test('pods of another spec, and pods not yet running their shell, are left alone (nothing is copied, nothing thrown)', () => {
  const c = copies();
  c.offer([pod('old-1', 'old', 'RunContainerError'), pod('api-1', 'h')], 'h');
});

test("each waiting pod gets Syncthing then the agent, checked by their digests, once, in the node's architecture; up says so once", async () => {
  const cluster = fakeCluster({ nodeArch: 'arm64' });
  const programs = programsIn();
  const said: string[] = [];
  const c = copies(cluster, programs, said);
  c.offer([waitingPod('api-1'), waitingPod('api-2')], 'h');
  c.offer([waitingPod('api-1')], 'h');
  await settle();
  assert.deepEqual(said, [COPIED_LINE]);
  assert.deepEqual(programs.looked, ['arm64'], 'the programs looked up once per architecture');
  assert.deepEqual(
    cluster.execs.map((e) => [e.pod, e.container, e.command[4]]),
    [
      ['api-1', 'api', '/devtool/bin/syncthing'],
      ['api-2', 'api', '/devtool/bin/syncthing'],
      ['api-1', 'api', '/devtool/bin/devtool-agent'],
      ['api-2', 'api', '/devtool/bin/devtool-agent'],
    ],
  );
  const agent = cluster.execs.find((e) => e.command[4] === '/devtool/bin/devtool-agent')!;
  assert.deepEqual(agent.input, Buffer.from('the agent'));
  assert.equal(agent.command[5], createHash('sha256').update('the agent').digest('hex'));
  assert.equal(agent.command[6], String('the agent'.length));
});

test("a release's host bundle is copied once, as the agent (Syncthing is inside)", async () => {
  const cluster = fakeCluster({ nodeArch: 'amd64' });
  const logged: string[] = [];
  const c = new AgentCopies({
    cluster,
    programs: async () => programsIn({ bundle: true }),
    context: 'team',
    log: (l) => logged.push(l),
    copied: () => undefined,
  });
  c.offer([waitingPod('api-1')], 'h');
  await settle();
  assert.deepEqual(
    cluster.execs.map((e) => [e.pod, e.command[4], e.input?.toString()]),
    [['api-1', '/devtool/bin/devtool-agent', 'the agent']],
  );
  assert.match(logged.join('\n'), /agent \(Syncthing inside\) for linux\/amd64 copied in/);
});

test('a Node the user may not read: the architecture comes from uname -m in the dev container', async () => {
  const cluster = fakeCluster({ uname: 'aarch64' });
  const programs = programsIn();
  copies(cluster, programs).offer([waitingPod('api-1')], 'h');
  await settle();
  assert.deepEqual(cluster.execs[0]!.command, ['uname', '-m']);
  assert.deepEqual(programs.looked, ['arm64']);
});

test('a failed copy, or a node of another architecture, stops the next offer with one line, once', async () => {
  const failing = copies(fakeCluster({ nodeArch: 'amd64', fail: 'sha256 0123, not 4567' }));
  failing.offer([waitingPod('api-1')], 'h');
  await settle();
  assert.throws(() => failing.offer([], 'h'), /^DevtoolError: cannot copy \/devtool\/bin\/syncthing into dev pod api-1: sha256 0123, not 4567$/);
  // Said once: the next offer (a redial's) tries the pod again.
  failing.offer([waitingPod('api-1')], 'h');
  await settle();
  assert.throws(() => failing.offer([], 'h'), /cannot copy/);
  const s390 = copies(fakeCluster({ nodeArch: 's390x' }));
  s390.offer([waitingPod('api-1')], 'h');
  await settle();
  assert.throws(() => s390.offer([], 'h'), /dev pod api-1 runs on linux\/s390x, for which there is no agent \(amd64 and arm64 only\)/);
});
