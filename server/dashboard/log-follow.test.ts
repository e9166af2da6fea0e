/** The bounded follow of a workload's logs, with a fake log source and fake pods. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { PodLogAt, PodLogEnd } from './kube-cluster.ts';
import { FELL_BEHIND, LineBatches, LogFollow } from './log-follow.ts';
import type { LogLine } from './log-lines.ts';
import type { PodSummary } from './model.ts';

const pod = (name: string, containers: [string, string | undefined][]): PodSummary => ({
  name,
  status: 'Running',
  ready: true,
  restarts: 0,
  labels: {},
  containers: containers.map(([n, instance]) => ({ name: n, ...(instance ? { instance } : {}) })),
});

/** Log streams the test writes to and ends; records each open. */
function fakeSource() {
  const open = new Map<string, { line: (raw: string) => void; end: (e: PodLogEnd) => void; signal: AbortSignal; at: PodLogAt }>();
  const opened: string[] = [];
  const source = (at: PodLogAt, line: (raw: string) => void, signal: AbortSignal) =>
    new Promise<PodLogEnd>((resolve) => {
      const key = `${at.pod}/${at.container}`;
      opened.push(`${key} tail ${at.tail}${at.follow ? ' follow' : ''}`);
      open.set(key, { line, end: resolve, signal, at });
      signal.addEventListener('abort', () => resolve('ended'));
    });
  return { source, open, opened };
}

function sink(accept = () => true) {
  const batches: string[][] = [];
  const ends: string[] = [];
  return {
    batches,
    ends,
    sink: {
      lines: (b: LogLine[]) => {
        batches.push(b.map((l) => `${l.source} ${l.text}`));
        return accept();
      },
      end: (r: string) => ends.push(r),
    },
  };
}

const tick = (ms = 0) => new Promise((r) => setTimeout(r, ms));
const OPTS = { tail: 200, maxPending: 10, gatherMs: 5 };

describe('following a workload', () => {
  test('one stream per started container; lines gathered and handed on in time order', async () => {
    const f = fakeSource();
    const s = sink();
    const follow = new LogFollow(f.source, s.sink, OPTS);
    follow.update([
      pod('web-1', [
        ['main', 'c1'],
        ['proxy', undefined],
      ]),
      pod('web-2', [['main', 'c2']]),
    ]);
    assert.deepEqual(f.opened, ['web-1/main tail 200 follow', 'web-2/main tail 200 follow'], 'a container not started has no stream yet');
    f.open.get('web-2/main')!.line('2026-12-02T14:00:02Z two');
    f.open.get('web-1/main')!.line('2026-12-02T14:00:01Z one');
    await tick(20);
    assert.deepEqual(s.batches, [['web-1/main one', 'web-2/main two']]);
    follow.close();
  });

  test('a restarted container and a new pod are picked up; a pod gone has its stream ended; the same instance is not read twice', async () => {
    const f = fakeSource();
    const s = sink();
    const follow = new LogFollow(f.source, s.sink, OPTS);
    follow.update([pod('web-1', [['main', 'c1']])]);
    const first = f.open.get('web-1/main')!;
    follow.update([pod('web-1', [['main', 'c1']])]);
    assert.equal(f.opened.length, 1, 'no second stream for the open one');
    // The container exits: its stream ends; the pod still shows the ended instance.
    first.end('ended');
    await tick();
    assert.equal(follow.streams(), 0);
    follow.update([pod('web-1', [['main', 'c1']])]);
    assert.equal(f.opened.length, 1, 'an ended instance is not read again');
    // Restarted: a new instance; and a new pod.
    follow.update([pod('web-1', [['main', 'c1b']]), pod('web-3', [['main', 'c3']])]);
    assert.deepEqual(f.opened.slice(1), ['web-1/main tail 200 follow', 'web-3/main tail 200 follow']);
    const web3 = f.open.get('web-3/main')!;
    follow.update([pod('web-1', [['main', 'c1b']])]);
    assert.ok(web3.signal.aborted, "the gone pod's stream is ended");
    follow.close();
    assert.ok(f.open.get('web-1/main')!.signal.aborted, 'closing ends every stream');
  });

  test('a restart seen while the old stream still reads is followed once the old one ends', async () => {
    const f = fakeSource();
    const follow = new LogFollow(f.source, sink().sink, OPTS);
    follow.update([pod('db-0', [['main', 'i1']])]);
    follow.update([pod('db-0', [['main', 'i2']])]);
    assert.equal(f.opened.length, 1);
    f.open.get('db-0/main')!.end('ended');
    await tick();
    assert.equal(f.opened.length, 2);
    follow.close();
  });

  test('not started after all (unavailable) is asked again; a refusal cuts the page off with a line', async () => {
    const f = fakeSource();
    const s = sink();
    const follow = new LogFollow(f.source, s.sink, OPTS);
    follow.update([pod('web-1', [['main', 'c1']])]);
    f.open.get('web-1/main')!.end('unavailable');
    await tick();
    assert.equal(f.opened.length, 2, 'asked again at once, the pods unchanged');
    f.open.get('web-1/main')!.end('forbidden');
    await tick();
    assert.deepEqual(s.ends, ['you may not read the logs of this namespace any more']);
    follow.update([pod('web-1', [['main', 'c9']])]);
    assert.equal(f.opened.length, 2, 'nothing opened once ended');
  });

  test('more lines waiting than allowed: cut off with one line, streams ended, nothing kept', async () => {
    const f = fakeSource();
    const s = sink();
    const follow = new LogFollow(f.source, s.sink, OPTS);
    follow.update([pod('web-1', [['main', 'c1']])]);
    const stream = f.open.get('web-1/main')!;
    for (let i = 0; i < 11; i++) stream.line(`2026-12-02T14:00:00Z line ${i}`);
    assert.deepEqual(s.ends, [FELL_BEHIND]);
    assert.ok(stream.signal.aborted);
    await tick(20);
    assert.deepEqual(s.batches, [], 'the pending lines are dropped, not handed on');
  });

  test('a page that takes no more (its sink says false) is cut off', async () => {
    const f = fakeSource();
    const s = sink(() => false);
    const follow = new LogFollow(f.source, s.sink, OPTS);
    follow.update([pod('web-1', [['main', 'c1']])]);
    f.open.get('web-1/main')!.line('2026-12-02T14:00:00Z one');
    await tick(20);
    assert.equal(s.batches.length, 1);
    assert.deepEqual(s.ends, [FELL_BEHIND]);
    assert.ok(f.open.get('web-1/main')!.signal.aborted);
  });

  test("a run's lines: batches alone, flushed at the end, closed without a word", async () => {
    const s = sink();
    let ended = 0;
    const b = new LineBatches(s.sink, { maxPending: 3, gatherMs: 1000 }, () => ended++);
    b.push({ source: '', at: Number.NaN, text: 'a' });
    b.push({ source: '', at: Number.NaN, text: 'b' });
    b.flush();
    assert.deepEqual(s.batches, [[' a', ' b']]);
    b.close();
    b.close();
    assert.equal(ended, 1);
    assert.deepEqual(s.ends, []);
    b.push({ source: '', at: Number.NaN, text: 'c' });
    b.flush();
    assert.equal(s.batches.length, 1);
  });
});
