import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { ExitCode } from '../../base/errors.ts';
import type { LogQuery } from '../../deploy/logs/stream.ts';
import { commandSandbox, failure, runCommand, success } from '../../../test/command-harness.ts';
import { logsHandler } from './run.ts';

function pod(name: string, service: string): V1Pod {
  return {
    metadata: { name, labels: { 'devtool.dev/service': service } },
    spec: { containers: [{ name: 'main' }] },
    status: { phase: 'Running', containerStatuses: [{ name: 'main', containerID: `c://${name}`, state: { running: {} } }] as never },
  };
}

/** A namespace of pods whose logs are `lines[pod]`, whole; it records what was asked. */
function logCluster(pods: V1Pod[], lines: Record<string, string>, workloads: string[] = []) {
  const asked: string[] = [];
  const queries: LogQuery[] = [];
  const handler = logsHandler(async (_f, target) => ({
    workloads: async (labelSelector) => {
      asked.push(`workloads ${labelSelector}`);
      return workloads.map((name) => ({ name, labels: {} }));
    },
    logs: {
      pods: async (labelSelector) => {
        asked.push(`pods ${target.context.name} ${target.namespace} ${labelSelector ?? '(all)'}`);
        return { items: pods, resourceVersion: '1' };
      },
      watchPods: async () => assert.fail('no watch without --follow'),
      log: (run, query, data) => {
        queries.push(query);
        const text = lines[run.pod];
        if (text === undefined) return { done: Promise.reject(new Error(`400 pod ${run.pod} is gone`)), stop: () => {} };
        data(Buffer.from(text));
        return { done: Promise.resolve(), stop: () => {} };
      },
    },
  }));
  return { handler, asked, queries };
}

const shop = () => logCluster([pod('web-1', 'web'), pod('api-1', 'api')], { 'web-1': 'w1\nw2\n', 'api-1': 'a1\n' }, ['web', 'api', 'worker']);

test('the environment of the folder: every pod, each line prefixed [service/pod], plain where stdout is no terminal', async () => {
  const sandbox = commandSandbox();
  const c = shop();
  const r = success(await runCommand(['logs'], { sandbox, handler: c.handler }));
  assert.deepEqual(r.stdout.split('\n').sort(), ['', '[api/api-1] a1', '[web/web-1] w1', '[web/web-1] w2']);
  assert.equal(r.stderr, '');
  // First every environment's pods (words for when this one has none), then this one's.
  assert.deepEqual(c.asked, ['pods alpha default devtool.dev/environment', 'pods alpha default devtool.dev/environment=project']);
  // Lines always come timestamped (a followed log cut is opened again from its last line's time); printed without.
  assert.deepEqual(c.queries, [
    { follow: false, timestamps: true },
    { follow: false, timestamps: true },
  ]);
});

test('on a terminal, one colour per service; NO_COLOR turns it off', async () => {
  const coloured = success(await runCommand(['logs'], { terminal: true, handler: shop().handler })).stdout;
  const lines = coloured.split('\n');
  assert.ok(lines.includes('\u001b[36m[api/api-1]\u001b[39m a1'), coloured);
  assert.ok(lines.includes('\u001b[33m[web/web-1]\u001b[39m w1'), coloured);
  const plain = success(await runCommand(['logs'], { terminal: true, env: { NO_COLOR: '1' }, handler: shop().handler })).stdout;
  assert.match(plain, /^\[web\/web-1\] w1$/m);
});

test('services named: only their pods; an unknown one is one line naming those that exist', async () => {
  const c = shop();
  const r = success(await runCommand(['logs', 'web'], { handler: c.handler }));
  assert.equal(r.stdout, '[web/web-1] w1\n[web/web-1] w2\n');
  assert.deepEqual(c.asked.slice(1, 3).sort(), ['pods alpha default devtool.dev/environment=project', 'workloads devtool.dev/environment=project']);
  const unknown = failure(await runCommand(['logs', 'web', 'wbe'], { handler: shop().handler }), ExitCode.failure);
  assert.equal(unknown, 'Error: no service "wbe" in environment project in namespace default; its services: api, web, worker');
});

test('--follow, --tail, --since and --timestamps reach each log; --context, --namespace and --name choose where', async () => {
  const c = logCluster([pod('web-1', 'web')], { 'web-1': '2026-12-02T10:00:00Z w1\n' });
  const r = success(
    await runCommand(['logs', '--tail', '100', '--since', '10m', '--timestamps', '-c', 'beta', '-n', 'n1', '--name', 'Shop'], { handler: c.handler }),
  );
  assert.equal(r.stdout, '[web/web-1] 2026-12-02T10:00:00Z w1\n');
  assert.deepEqual(c.asked, ['pods beta n1 devtool.dev/environment', 'pods beta n1 devtool.dev/environment=shop']);
  assert.deepEqual(c.queries, [{ follow: false, tailLines: 100, sinceSeconds: 600, timestamps: true }]);
  assert.equal(success(await runCommand(['logs'], { handler: c.handler })).stdout, '[web/web-1] w1\n', 'without --timestamps, without the time');
});

test('--all: every pod of the namespace, whatever made it; with a service named, a usage error', async () => {
  const c = logCluster([pod('web-1', 'web')], { 'web-1': 'w1\n' });
  assert.equal(success(await runCommand(['logs', '--all'], { handler: c.handler })).stdout, '[web/web-1] w1\n');
  assert.deepEqual(c.asked, ['pods alpha default (all)']);
  assert.match(failure(await runCommand(['logs', '--all', 'web'], { handler: c.handler }), ExitCode.usage), /^Error: --all prints every pod of the namespace/);
});

test('bad --tail and --since: one line naming the flag, exit 2, no cluster asked', async () => {
  const c = shop();
  assert.match(failure(await runCommand(['logs', '--tail', '-1'], { handler: c.handler }), ExitCode.usage), /flag --tail needs a value .* --tail=VALUE/);
  for (const args of [['--tail=-1'], ['--tail', 'x']]) {
    assert.match(
      failure(await runCommand(['logs', ...args], { handler: c.handler }), ExitCode.usage),
      /for flag --tail: expected a number of lines/,
      args.join(' '),
    );
  }
  assert.match(failure(await runCommand(['logs', '--since', '10x'], { handler: c.handler }), ExitCode.usage), /invalid value "10x" for flag --since/);
  assert.deepEqual(c.asked, []);
});

test('a log that cannot be read: said, the others printed, exit 1', async () => {
  const c = logCluster([pod('web-1', 'web'), pod('web-2', 'web')], { 'web-1': 'w1\n' });
  const r = await runCommand(['logs'], { handler: c.handler });
  assert.equal(r.code, ExitCode.failure);
  assert.equal(r.stdout, '[web/web-1] w1\n');
  assert.match(r.stderr, /^\[web\/web-2\] the log could not be read: 400 pod web-2 is gone\nError: the logs of 1 container\(s\) could not be read/);
});

test("no pod of the folder's environment, but others deployed there under --name: the notice names them", async () => {
  const other = pod('web-1', 'web');
  other.metadata!.labels!['devtool.dev/environment'] = 'demo';
  const c = logsHandler(async () => ({
    workloads: async () => [],
    logs: {
      pods: async (labelSelector) => ({ items: labelSelector === 'devtool.dev/environment' ? [other] : [], resourceVersion: '1' }),
      watchPods: async () => assert.fail('no watch without --follow'),
      log: () => assert.fail('no pod to read'),
    },
  }));
  const r = success(await runCommand(['logs'], { handler: c }));
  assert.equal(r.stdout, '');
  assert.equal(r.stderr, 'no pods of environment project in namespace default (deployed there: demo; name one with --name)\n');
});
