import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type HubCluster, type Subscriber, WatchHub, type WatchSink } from './hub.ts';
import type { Kind } from './model.ts';

/** An in-memory cluster: watches the test drives by hand, and rights per user and namespace. */
function fakeCluster(failAtOnce?: string) {
  const open = new Map<string, { owner: string; sink: WatchSink }>();
  const rights = new Map<string, Set<Kind> | 'unreachable'>(); // "user/namespace" -> kinds it may list and watch
  const opened: string[] = [];
  const reviews: string[] = [];
  const cluster: HubCluster = {
    watch(owner, namespace, kind, sink) {
      const key = `${namespace}/${kind}`;
      assert.ok(!open.has(key), `a second watch of ${key}`);
      open.set(key, { owner, sink });
      opened.push(key);
      if (failAtOnce) sink.fail(failAtOnce);
      return () => open.delete(key);
    },
    async mayWatch(user, namespace, kind) {
      reviews.push(`${user}:${namespace}/${kind}`);
      const r = rights.get(`${user}/${namespace}`);
      if (r === 'unreachable') throw new Error('the API server cannot be reached');
      return r?.has(kind) ?? false;
    },
  };
  const allow = (user: string, namespace: string, kinds: Kind[] | 'unreachable') =>
    rights.set(`${user}/${namespace}`, kinds === 'unreachable' ? kinds : new Set(kinds));
  return { cluster, open, opened, reviews, allow };
}

const pod = (name: string, phase = 'Running') => ({ metadata: { name }, status: { phase } });

function recorder(accept = true) {
  const seen: Kind[] = [];
  const ended: string[] = [];
  const s: Subscriber = {
    changed: (k) => {
      seen.push(k);
      return accept;
    },
    end: (r) => ended.push(r),
  };
  return { s, seen, ended };
}

const owners: Record<string, string> = { web: 'ann', other: 'bob' };
const hubOf = (cluster: HubCluster, recheckMs = 60_000) => new WatchHub(cluster, { ownerOf: async (ns) => owners[ns], recheckMs });

describe('the watch hub', () => {
  test('one watch per namespace and kind, opened as the owner, fanned out to every page, closed after the last', async () => {
    const f = fakeCluster();
    f.allow('ann', 'web', ['pods']);
    f.allow('cid', 'web', ['pods']);
    const hub = hubOf(f.cluster);
    const a = recorder();
    const c = recorder();
    const sa = await hub.subscribe('ann', 'web', ['pods'], a.s);
    const sc = await hub.subscribe('cid', 'web', ['pods'], c.s);
    assert.ok(sa !== 'forbidden' && sc !== 'forbidden');
    assert.deepEqual(f.opened, ['web/pods']);
    assert.equal(f.open.get('web/pods')?.owner, 'ann', "the owner's token, whoever subscribes");
    assert.deepEqual(hub.items('web', 'pods'), undefined, 'nothing before the first list');

    const sink = f.open.get('web/pods')!.sink;
    sink.reset([pod('p1'), pod('p2', 'Pending')]);
    sink.put(pod('p2'));
    sink.remove(pod('p1'));
    assert.deepEqual(a.seen, ['pods', 'pods', 'pods']);
    assert.deepEqual(c.seen, ['pods', 'pods', 'pods']);
    assert.deepEqual(
      hub.items('web', 'pods')?.map((p) => [p.name, p.status]),
      [['p2', 'Running']],
    );
    sink.remove(pod('gone'));
    assert.equal(a.seen.length, 3, 'removing what is not there tells nobody');

    sa.close();
    assert.deepEqual(hub.stats(), { watches: 1, subscribers: 1 });
    sc.close();
    assert.deepEqual(hub.stats(), { watches: 0, subscribers: 0 });
    assert.equal(f.open.size, 0, 'the watch is closed with the last page');
  });

  test('a page joining an open watch is told at once; a new watch after the last closed lists again', async () => {
    const f = fakeCluster();
    f.allow('ann', 'web', ['pods']);
    const hub = hubOf(f.cluster);
    const first = await hub.subscribe('ann', 'web', ['pods'], recorder().s);
    f.open.get('web/pods')!.sink.reset([pod('p1')]);
    const late = recorder();
    const second = await hub.subscribe('ann', 'web', ['pods'], late.s);
    assert.deepEqual(late.seen, ['pods']);
    assert.ok(first !== 'forbidden' && second !== 'forbidden');
    first.close();
    second.close();
    await hub.subscribe('ann', 'web', ['pods'], recorder().s);
    assert.deepEqual(f.opened, ['web/pods', 'web/pods']);
    assert.equal(hub.items('web', 'pods'), undefined);
  });

  test('a user without list and watch of every kind asked for gets nothing and opens nothing', async () => {
    const f = fakeCluster();
    f.allow('eve', 'web', ['pods']); // pods, but not deployments
    const hub = hubOf(f.cluster);
    const e = recorder();
    assert.equal(await hub.subscribe('eve', 'web', ['pods', 'deployments'], e.s), 'forbidden');
    assert.equal(await hub.subscribe('eve', 'other', ['pods'], e.s), 'forbidden');
    assert.equal(await hub.subscribe('ann', 'unmanaged', ['pods'], e.s), 'forbidden', 'not a namespace of devtool');
    assert.deepEqual(f.opened, []);
    assert.deepEqual(e.seen, []);
    assert.ok(f.reviews.includes('eve:web/deployments'), "asked with eve's own rights");
  });

  test('rights are asked again: a user whose rights went is cut off and told why; the others stay', async () => {
    const f = fakeCluster();
    f.allow('ann', 'web', ['pods']);
    f.allow('cid', 'web', ['pods']);
    const hub = hubOf(f.cluster, 20);
    const a = recorder();
    const c = recorder();
    await hub.subscribe('ann', 'web', ['pods'], a.s);
    await hub.subscribe('cid', 'web', ['pods'], c.s);
    f.allow('cid', 'web', []);
    await new Promise((r) => setTimeout(r, 80));
    assert.deepEqual(c.ended, ['your rights in this namespace changed']);
    assert.deepEqual(a.ended, []);
    f.open.get('web/pods')!.sink.reset([pod('secret-pod')]);
    assert.deepEqual(c.seen, [], 'nothing after the cut');
    assert.deepEqual(a.seen, ['pods']);
    assert.deepEqual(hub.stats(), { watches: 1, subscribers: 1 });
  });

  test('a page too slow to be told more is dropped, not buffered for; the others keep the watch', async () => {
    const f = fakeCluster();
    f.allow('ann', 'web', ['pods']);
    const hub = hubOf(f.cluster);
    const slow = recorder(false);
    const quick = recorder();
    await hub.subscribe('ann', 'web', ['pods'], slow.s);
    await hub.subscribe('ann', 'web', ['pods'], quick.s);
    const sink = f.open.get('web/pods')!.sink;
    sink.reset([pod('p1')]);
    sink.put(pod('p2'));
    assert.equal(slow.seen.length, 1);
    assert.deepEqual(slow.ended, ['this page fell behind the live updates: reload it']);
    assert.equal(quick.seen.length, 2);
    assert.deepEqual(hub.stats(), { watches: 1, subscribers: 1 });
  });

  test('a review that fails refuses a new page but does not cut an open one', async () => {
    const f = fakeCluster();
    f.allow('ann', 'web', ['pods']);
    const hub = hubOf(f.cluster, 20);
    const a = recorder();
    await hub.subscribe('ann', 'web', ['pods'], a.s);
    f.allow('ann', 'web', 'unreachable');
    await new Promise((r) => setTimeout(r, 80));
    assert.deepEqual(a.ended, []);
    assert.equal(await hub.subscribe('ann', 'web', ['pods'], recorder().s), 'forbidden');
    assert.deepEqual(hub.stats(), { watches: 1, subscribers: 1 });
  });

  test('a watch that gives up ends every page on it once with the reason, closes, and is not retried until a page comes again', async () => {
    const f = fakeCluster();
    f.allow('ann', 'web', ['pods', 'deployments']);
    f.allow('cid', 'web', ['pods']);
    const hub = hubOf(f.cluster);
    const a = recorder();
    const c = recorder();
    await hub.subscribe('ann', 'web', ['pods', 'deployments'], a.s);
    await hub.subscribe('cid', 'web', ['pods'], c.s);
    f.open.get('web/pods')!.sink.fail("the namespace's owner ann has no account any more");
    const said = "live updates stopped: the namespace's owner ann has no account any more";
    assert.deepEqual(a.ended, [said]);
    assert.deepEqual(c.ended, [said]);
    assert.deepEqual(hub.stats(), { watches: 0, subscribers: 0 }, "the other kind's watch closed with its last page");
    assert.equal(f.open.size, 0);
    assert.deepEqual(f.opened, ['web/pods', 'web/deployments']);
  });

  test('a watch that gives up before it answers ends the page that opened it at once', async () => {
    const f = fakeCluster("the namespace's owner ann has no account any more");
    f.allow('ann', 'web', ['pods']);
    const hub = hubOf(f.cluster);
    const a = recorder();
    assert.notEqual(await hub.subscribe('ann', 'web', ['pods'], a.s), 'forbidden');
    assert.deepEqual(a.ended, ["live updates stopped: the namespace's owner ann has no account any more"]);
    assert.deepEqual(hub.stats(), { watches: 0, subscribers: 0 });
  });
});
