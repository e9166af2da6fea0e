import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { agentArch, agentImagePullError, chooseAgentImage, copyCommand, shellMissing, waitingForCopy } from './agent-delivery.ts';
import { AGENT_PATH, devContainerName, waitingForAgent } from './mirror.ts';

test('the agent image: DEVTOOL_BIN_IMAGE, else the registry of the context (which the CLI may push to), else the release, else none', () => {
  const base = { version: '0.1.0', release: 'ghcr.io/devtool/devtool-bin@sha256:ab' };
  assert.deepEqual(chooseAgentImage({ ...base, named: ' my/bin:1 ', registry: 'reg:5000' }), { image: 'my/bin:1', fromRegistry: false });
  assert.deepEqual(chooseAgentImage({ ...base, named: '', registry: 'reg:5000/' }), { image: 'reg:5000/devtool-bin:0.1.0', fromRegistry: true });
  assert.deepEqual(chooseAgentImage({ ...base, named: undefined, registry: undefined }), { image: base.release, fromRegistry: false });
  assert.equal(chooseAgentImage({ ...base, named: undefined, registry: undefined, release: undefined }), undefined);
});

const waiting = waitingForAgent([AGENT_PATH, 'supervise']);

function pod(o: { init?: string; dev?: object; lastDev?: object; command?: string[]; started?: boolean; deleting?: boolean }): V1Pod {
  return {
    metadata: { name: 'api-devtool-1', ...(o.deleting ? { deletionTimestamp: new Date() } : {}) },
    spec: {
      containers: [
        { name: 'proxy', image: 'envoy' },
        { name: 'api', image: 'localhost:5000/api:1', command: o.command ?? waiting },
      ],
      ...(o.init ? { initContainers: [{ name: 'devtool-bin', image: 'x' }] } : {}),
    },
    status: {
      ...(o.init
        ? { initContainerStatuses: [{ name: 'devtool-bin', image: 'x', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: o.init } } }] }
        : {}),
      containerStatuses: [
        { name: 'proxy', image: 'envoy', imageID: '', ready: true, restartCount: 0, state: { running: {} } },
        {
          name: 'api',
          image: 'localhost:5000/api:1',
          imageID: '',
          ready: false,
          restartCount: 0,
          ...(o.started !== undefined ? { started: o.started } : {}),
          state: o.dev ?? { running: {} },
          ...(o.lastDev ? { lastState: o.lastDev } : {}),
        },
      ],
    },
  };
}

test("the installer's pull errors send the agent through the API; its other states do not", () => {
  assert.equal(agentImagePullError(pod({ init: 'ErrImagePull' })), 'ErrImagePull');
  assert.equal(agentImagePullError(pod({ init: 'ImagePullBackOff' })), 'ImagePullBackOff');
  assert.equal(agentImagePullError(pod({ init: 'PodInitializing' })), undefined);
  assert.equal(agentImagePullError(pod({})), undefined);
});

test('a dev container that runs its shell and has not started waits for the copy; started, ending or another command does not', () => {
  assert.equal(waitingForCopy(pod({ started: false })), 'api');
  assert.equal(waitingForCopy(pod({ started: true })), undefined);
  assert.equal(waitingForCopy(pod({ started: false, deleting: true })), undefined);
  assert.equal(waitingForCopy(pod({ started: false, dev: { waiting: { reason: 'ContainerCreating' } } })), undefined);
  assert.equal(waitingForCopy(pod({ started: false, command: [AGENT_PATH, 'supervise'] })), undefined);
  assert.equal(devContainerName(pod({})), 'api', 'the dev container is the waiting one, not the first');
});

test("an image without /bin/sh is told by the runtime's start error, first as waiting, then as the last state", () => {
  const message = 'failed to create containerd task: exec: "/bin/sh": stat /bin/sh: no such file or directory: unknown';
  assert.equal(shellMissing(pod({ dev: { waiting: { reason: 'RunContainerError', message } } })), 'localhost:5000/api:1');
  assert.equal(
    shellMissing(pod({ dev: { waiting: { reason: 'CrashLoopBackOff' } }, lastDev: { terminated: { exitCode: 128, reason: 'StartError', message } } })),
    'localhost:5000/api:1',
  );
  assert.equal(shellMissing(pod({ dev: { waiting: { reason: 'RunContainerError', message: 'exec: "/app/run": no such file' } } })), undefined);
  assert.equal(shellMissing(pod({ command: [AGENT_PATH, 'supervise'], dev: { waiting: { reason: 'RunContainerError', message } } })), undefined);
});

test("a node's architecture by any of its names; others have no agent", () => {
  assert.equal(agentArch('amd64'), 'amd64');
  assert.equal(agentArch('x86_64\n'), 'amd64');
  assert.equal(agentArch('aarch64'), 'arm64');
  assert.equal(agentArch('arm64'), 'arm64');
  assert.equal(agentArch('s390x'), undefined);
  assert.equal(agentArch(undefined), undefined);
});

/** Runs copyCommand through this machine's sh, `input` as its standard input. */
function runCopy(target: string, input: Buffer, sha: string, size: number, path?: string) {
  const [sh, ...args] = copyCommand(target, sha, size);
  return spawnSync(sh!, args, { input, encoding: 'utf8', env: { PATH: path ?? process.env.PATH } });
}

test('the copy lands whole and executable only when its SHA-256 matches; a mismatch leaves nothing', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devtool-copy-'));
  const body = Buffer.from('#!/bin/sh\necho agent "$@"\n');
  const sha = createHash('sha256').update(body).digest('hex');
  const target = join(dir, 'devtool-agent');
  const bad = runCopy(target, body, '0'.repeat(64), body.length);
  assert.equal(bad.status, 3, bad.stderr);
  assert.match(bad.stderr, /^sha256 [0-9a-f]{64}, not 0{64}/);
  assert.throws(() => statSync(target));
  assert.throws(() => statSync(`${target}.part`));
  const good = runCopy(target, body, sha, body.length);
  assert.equal(good.status, 0, good.stderr);
  assert.equal(good.stdout.trim(), 'sha256');
  assert.deepEqual(readFileSync(target), body);
  assert.equal(statSync(target).mode & 0o777, 0o755);
});

test('without sha256sum in the image the size is checked', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devtool-copy-'));
  // A PATH with the few programs the copy needs, and no sha256sum.
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  for (const tool of ['cat', 'wc', 'chmod', 'mv', 'rm'])
    symlinkSync(spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim(), join(bin, tool));
  const body = Buffer.from('twelve bytes');
  const target = join(dir, 'syncthing');
  const short = runCopy(target, body.subarray(0, 5), 'unused', body.length, bin);
  assert.equal(short.status, 3, short.stderr);
  assert.match(short.stderr, /5 bytes, not 12/);
  const whole = runCopy(target, body, 'unused', body.length, bin);
  assert.equal(whole.status, 0, whole.stderr);
  assert.equal(whole.stdout.trim(), 'size');
  assert.deepEqual(readFileSync(target), body);
});

test("the dev container's shell waits for the agent, then becomes it with the agent's arguments", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'devtool-wait-'));
  const agent = join(dir, 'devtool-agent');
  const [sh, ...args] = waitingForAgent([agent, 'supervise', '--no-syncthing']);
  const child = spawn(sh!, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(child.exitCode, null, 'still waiting');
  const body = Buffer.from('#!/bin/sh\necho "agent $$ $*"\n');
  assert.equal(runCopy(agent, body, createHash('sha256').update(body).digest('hex'), body.length).status, 0);
  const code = await new Promise((r) => child.once('exit', r));
  assert.equal(code, 0);
  assert.equal(out.trim(), `agent ${child.pid} supervise --no-syncthing`, 'the same process (exec), with the arguments');
});
