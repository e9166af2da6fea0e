import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { NamespaceRecord, NamespaceSink } from '../store/store.ts';
import { homeVisible, type NamespaceListener, NamespaceHub } from './namespace-hub.ts';

const ns = (name: string, owner: string, scope?: 'personal' | 'global'): NamespaceRecord => ({
  name,
  owner,
  personal: false,
  status: 'Active',
  ...(scope ? { preview: { scope, pipeline: name, deployedAt: '2026-12-02T10:00:00Z' } } : {}),
});

/** A source the test drives by hand: how many watches it opened, and the open one's sink. */
function fakeSource() {
  const state = { opened: 0, stopped: 0, sink: undefined as NamespaceSink | undefined };
  const source = {
    watchNamespaces(sink: NamespaceSink) {
      state.opened++;
      state.sink = sink;
      return () => {
        state.stopped++;
        state.sink = undefined;
      };
    },
  };
  return { source, state };
}

function listener(accept = true) {
  const seen: (readonly string[] | 'all')[] = [];
  const ended: string[] = [];
  const l: NamespaceListener = {
    changed: (names) => {
      seen.push(names);
      return accept;
    },
    end: (r) => ended.push(r),
  };
  return { l, seen, ended };
}

describe('the namespace hub', () => {
  test('one watch for every page, told which namespaces changed, closed after the last page', () => {
    const { source, state } = fakeSource();
    const hub = new NamespaceHub(source);
    const a = listener();
    const b = listener();
    const sa = hub.subscribe(a.l);
    assert.equal(hub.records(), undefined, 'nothing before the first list');
    state.sink!.reset([ns('web', 'ann')]);
    const sb = hub.subscribe(b.l);
    assert.deepEqual(b.seen, ['all'], 'a page joining an open watch is told at once');
    state.sink!.put(ns('shop', 'bob'));
    state.sink!.remove('web');
    state.sink!.remove('never');
    assert.deepEqual(a.seen, ['all', ['shop'], ['web']]);
    assert.equal(hub.get('web'), null);
    assert.equal(hub.get('shop')?.owner, 'bob');
    assert.equal(state.opened, 1);
    sa.close();
    assert.deepEqual(hub.stats(), { watching: true, listeners: 1 });
    sb.close();
    assert.deepEqual(hub.stats(), { watching: false, listeners: 0 });
    assert.equal(state.stopped, 1);
    assert.equal(hub.get('shop'), undefined, 'forgotten with the watch');
  });

  test('a page too slow to be told more is dropped; a watch whose first list comes at once and loses its only page closes', () => {
    const { source, state } = fakeSource();
    const hub = new NamespaceHub(source);
    const slow = listener(false);
    const quick = listener();
    hub.subscribe(quick.l);
    hub.subscribe(slow.l);
    state.sink!.reset([]);
    assert.deepEqual(slow.ended, ['this page fell behind the live updates: reload it']);
    assert.deepEqual(hub.stats(), { watching: true, listeners: 1 });

    const eager = {
      watchNamespaces(sink: NamespaceSink) {
        sink.reset([]);
        return () => state.stopped++;
      },
    };
    const stoppedBefore = state.stopped;
    const other = new NamespaceHub(eager);
    other.subscribe(listener(false).l);
    assert.deepEqual(other.stats(), { watching: false, listeners: 0 });
    assert.equal(state.stopped, stoppedBefore + 1);
  });

  test("Home's rule: a user's own namespaces and other users' global previews; never another's private namespace or personal preview", () => {
    const all = [ns('b-app', 'bob'), ns('a-app', 'ann'), ns('b-prev', 'bob', 'personal'), ns('b-glob', 'bob', 'global'), ns('a-glob', 'ann', 'global')];
    const seen = homeVisible('ann', all);
    assert.deepEqual(
      seen.own.map((n) => n.name),
      ['a-app', 'a-glob'],
    );
    assert.deepEqual(
      seen.previews.map((n) => n.name),
      ['b-glob'],
    );
  });
});
