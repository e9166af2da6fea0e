import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { dashboardCluster } from './kube-cluster.ts';
import { KubeHttpError, type KubeHttp } from './kube-http.ts';

const obj = (name: string, rv: string) => ({ metadata: { name, resourceVersion: rv } });

/** A scripted API server: each list and each watch answers the next of its script; records what was asked, as whom. */
function fakeApi(script: { lists: unknown[]; watches: ((line: (v: unknown) => void, signal: AbortSignal) => Promise<void>)[]; logs?: (string[] | Error)[] }) {
  const asked: string[] = [];
  const connect = async (user: string): Promise<KubeHttp> => ({
    async get(path) {
      asked.push(`${user} GET ${path}`);
      const next = script.lists.shift();
      if (next instanceof Error) throw next;
      return next;
    },
    async post(path, body) {
      const attrs = (body as { spec: { resourceAttributes: { verb: string; resource: string; namespace: string } } }).spec.resourceAttributes;
      asked.push(`${user} POST ${path} ${attrs.verb} ${attrs.resource} in ${attrs.namespace}`);
      return { status: { allowed: user === 'ann' || attrs.verb === 'list' } };
    },
    async stream(path, line, signal) {
      asked.push(`${user} WATCH ${path}`);
      const next = script.watches.shift();
      if (next) return next(line, signal);
      await new Promise((r) => signal.addEventListener('abort', r));
    },
    async lines(path, line) {
      asked.push(`${user} LOG ${path}`);
      const next = script.logs?.shift();
      if (next instanceof Error) throw next;
      for (const l of next ?? []) line(l);
    },
  });
  return { connect, asked };
}

const until = async (check: () => boolean) => {
  for (let i = 0; i < 1000 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(check(), 'in time');
};

describe("the dashboard's cluster", () => {
  test("lists as the user; a refusal or a missing namespace is 'forbidden', other failures are thrown", async () => {
    const api = fakeApi({
      lists: [{ items: [obj('a', '1')] }, new KubeHttpError(403, 'forbidden'), new KubeHttpError(404, 'gone'), new KubeHttpError(500, 'boom')],
      watches: [],
    });
    const c = dashboardCluster(api.connect, () => undefined);
    assert.deepEqual(await c.list('ann', 'web', 'environments'), [obj('a', '1')]);
    assert.equal(api.asked[0], 'ann GET /api/v1/namespaces/web/configmaps?labelSelector=devtool.dev%2Fenvironment-state');
    assert.equal(await c.list('bob', 'web', 'pods'), 'forbidden');
    assert.equal(await c.list('bob', 'web', 'pods'), 'forbidden');
    await assert.rejects(c.list('ann', 'web', 'pods'), /boom/);
  });

  test('may watch: two access reviews with the user’s own token, list and watch, both needed', async () => {
    const api = fakeApi({ lists: [], watches: [] });
    const c = dashboardCluster(api.connect, () => undefined);
    assert.equal(await c.mayWatch('ann', 'web', 'deployments'), true);
    assert.equal(await c.mayWatch('bob', 'web', 'deployments'), false, 'list alone is not enough');
    assert.deepEqual(api.asked.slice(0, 2).sort(), [
      'ann POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews list deployments in web',
      'ann POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews watch deployments in web',
    ]);
  });

  test('a watch: list, then changes from its version; ERROR: list again; a failure: wait 1 s, 2 s..., list again; stopped: nothing more', async () => {
    const events: string[] = [];
    const errors: string[] = [];
    const api = fakeApi({
      lists: [
        { items: [obj('a', '5')], metadata: { resourceVersion: '10' } },
        { items: [obj('b', '13')], metadata: { resourceVersion: '20' } },
        new Error('unreachable'),
        { items: [], metadata: { resourceVersion: '30' } },
      ],
      watches: [
        async (line) => {
          line({ type: 'ADDED', object: obj('b', '11') });
          line({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '12' } } });
          line({ type: 'DELETED', object: obj('a', '13') });
        }, // ended by the server: watched again from 13
        async (line) => line({ type: 'ERROR', object: { code: 410 } }), // too old: listed again
        async () => {
          throw new Error('connection reset');
        },
      ],
    });
    const c = dashboardCluster(api.connect, (err, what) => errors.push(`${what}: ${(err as Error).message}`));
    const stop = c.watch('owner', 'web', 'pods', {
      reset: (objects) => events.push(`reset ${objects.map((o) => (o as { metadata: { name: string } }).metadata.name).join(',')}`),
      put: (o) => events.push(`put ${(o as { metadata: { name: string } }).metadata.name}`),
      remove: (o) => events.push(`remove ${(o as { metadata: { name: string } }).metadata.name}`),
      fail: (reason) => events.push(`fail ${reason}`),
    });
    await until(() => errors.length >= 2 && events.length >= 5);
    stop();
    const calls = api.asked.length;
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(api.asked.length, calls, 'nothing asked once stopped');
    assert.deepEqual(events, ['reset a', 'put b', 'remove a', 'reset b', 'reset ']);
    const watches = api.asked.filter((a) => a.includes('WATCH')).map((a) => /resourceVersion=(\d*)/.exec(a)?.[1]);
    assert.deepEqual(watches.slice(0, 3), ['10', '13', '20']);
    assert.ok(
      api.asked.every((a) => a.startsWith('owner ')),
      'every call as the owner',
    );
    assert.deepEqual(errors, ['watch of pods in web: connection reset', 'watch of pods in web: unreachable']);
  });

  test("a watch whose owner's account is gone, or who may not read there any more, gives up once and asks nothing more", async () => {
    for (const [failure, reason] of [
      [Object.assign(new Error('serviceaccounts "user-ann" not found'), { code: 404 }), "the namespace's owner ann has no account any more"],
      [new KubeHttpError(403, 'GET pods: 403 forbidden'), "the namespace's owner ann may not read it any more"],
    ] as const) {
      const failed: string[] = [];
      const errors: string[] = [];
      let asked = 0;
      const connect = async (user: string): Promise<KubeHttp> => {
        asked++;
        if (failure instanceof KubeHttpError) return (await fakeApi({ lists: [failure], watches: [] }).connect(user)) as KubeHttp;
        throw failure;
      };
      dashboardCluster(connect, (err) => errors.push(String(err))).watch('ann', 'web', 'pods', {
        reset: () => assert.fail('nothing listed'),
        put: () => assert.fail('nothing put'),
        remove: () => assert.fail('nothing removed'),
        fail: (r) => failed.push(r),
      });
      await until(() => failed.length === 1);
      await new Promise((r) => setTimeout(r, 1100)); // past the first retry's 1 s
      assert.deepEqual(failed, [reason]);
      assert.equal(asked, 1, 'not retried');
      assert.deepEqual(errors, []);
    }
  });

  test("a pod's log as the user, with timestamps, its tail, followed; 403 'forbidden', 400 and 404 'unavailable'", async () => {
    const api = fakeApi({
      lists: [],
      watches: [],
      logs: [['2026-12-02T14:00:00Z one'], new KubeHttpError(403, 'no'), new KubeHttpError(400, 'not started'), new KubeHttpError(500, 'boom')],
    });
    const cluster = dashboardCluster(api.connect, () => undefined);
    const seen: string[] = [];
    const at = { pod: 'web-1', container: 'main', tail: 200, follow: true };
    const signal = new AbortController().signal;
    assert.equal(await cluster.podLog('bob', 'shop', at, (l) => seen.push(l), signal), 'ended');
    assert.deepEqual(seen, ['2026-12-02T14:00:00Z one']);
    assert.equal(await cluster.podLog('bob', 'shop', at, () => undefined, signal), 'forbidden');
    assert.equal(await cluster.podLog('bob', 'shop', { ...at, follow: false }, () => undefined, signal), 'unavailable');
    await assert.rejects(
      cluster.podLog('bob', 'shop', at, () => undefined, signal),
      /boom/,
    );
    assert.deepEqual(api.asked[0], 'bob LOG /api/v1/namespaces/shop/pods/web-1/log?container=main&tailLines=200&timestamps=true&follow=true');
    assert.deepEqual(api.asked[2], 'bob LOG /api/v1/namespaces/shop/pods/web-1/log?container=main&tailLines=200&timestamps=true');
  });
});
