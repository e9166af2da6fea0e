/**
 * settleReceiveOnly against an in-memory container folder: a file table of receive-only changes,
 * each either the bootstrap's copy (the agent removes it) or the app's (it stays), a puller that
 * needs a few probes, and a clock. The switch to send-receive may come only once no copy is left
 * among the receive-only changes and the laptop sees the container caught up.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ExecCapture, StdinWriter } from '../kube/exec.ts';
import { dropCopied, dropInput, forgetCopy, parseDropAnswer, settleReceiveOnly, type ChangedItem, type SettleEnds } from './settle.ts';

interface Entry {
  name: string;
  /** Still exactly what the bootstrap wrote. */
  copied: boolean;
  deleted?: boolean;
}

/** The container's receive-only changes; the puller is busy for `pulling` probes. */
class FakeContainer implements SettleEnds {
  time = 0;
  drops: string[][] = [];
  rescans: string[][] = [];
  listings = 0;
  isClosed = false;
  /** The laptop sees the container one version short while it needs nothing (fixed by a rescan of `lacking`). */
  behind = false;
  stuck: string[] = [];
  /** Both indexes current. */
  exchanged = true;
  report?: (d: string) => void;
  constructor(
    public changed: Entry[],
    public pulling = 0,
    /** Called on each probe (the laptop acting meanwhile). */
    private readonly meanwhile: (c: FakeContainer) => void = () => undefined,
  ) {}
  async probe() {
    this.meanwhile(this);
    const busy = this.pulling > 0;
    if (busy) this.pulling--;
    // As Syncthing has it: a receive-only change is not announced, so the laptop sees the
    // container lack that path until the folder turns send-receive.
    const behind = busy || this.behind || this.changed.length > 0;
    return {
      caughtUp: !behind,
      remoteIdle: !busy,
      remoteNeed: busy ? 1 : 0,
      receiveOnly: this.changed.length,
      remoteBehind: behind,
      localReady: true,
      exchanged: this.exchanged,
      describe: `${this.changed.length} receive-only`,
    };
  }
  async lacking(): Promise<string[]> {
    return [...this.changed.map((e) => e.name), ...(this.behind ? this.stuck : [])];
  }
  async localChanged(): Promise<ChangedItem[]> {
    this.listings++;
    return this.changed.map((e) => ({ name: e.name, deleted: e.deleted, size: 1, modified: 'm' }));
  }
  async dropCopied(names: string[]): Promise<string[]> {
    this.drops.push(names);
    const removed = this.changed.filter((e) => names.includes(e.name) && e.copied).map((e) => e.name);
    return removed;
  }
  async rescan(paths: string[]): Promise<void> {
    this.rescans.push(paths);
    // Removed receive-only files are deleted with an empty version: the laptop's version (or
    // nothing) is pulled, they are no longer receive-only changes.
    this.changed = this.changed.filter((e) => !paths.includes(e.name));
    if (this.stuck.length > 0 && this.stuck.every((n) => paths.includes(n))) this.behind = false;
    this.pulling = 1;
  }
  async rescanLacking() {
    if (this.stuck.length === 0) return 'nothing listed';
    await this.rescan(this.stuck);
    return this.stuck.join(', ');
  }
  closed() {
    return this.isClosed;
  }
  async sleep(ms: number) {
    this.time += ms;
  }
  now() {
    return this.time;
  }
}

test('nothing changed in the container: settled at the first look, no exec', async () => {
  const c = new FakeContainer([], 2);
  assert.deepEqual(await settleReceiveOnly(c, 10_000, 'app'), []);
  assert.equal(c.drops.length, 0);
  assert.equal(c.listings, 0);
});

test('stale copies are removed once the puller is done, then rescanned; the app’s file stays', async () => {
  const c = new FakeContainer(
    [
      { name: 'a.sync-conflict-20260101-000000-AAAAAAA.txt', copied: true },
      { name: 'deleted-on-laptop.txt', copied: true },
      { name: 'written-by-app.txt', copied: false },
      { name: 'deleted-by-app.txt', copied: false, deleted: true },
    ],
    3,
  );
  const dropped = await settleReceiveOnly(c, 10_000, 'app');
  assert.deepEqual(dropped, ['a.sync-conflict-20260101-000000-AAAAAAA.txt', 'deleted-on-laptop.txt']);
  // Deletions are not offered (nothing on disk); the app's file is offered once only.
  assert.deepEqual(c.drops, [['a.sync-conflict-20260101-000000-AAAAAAA.txt', 'deleted-on-laptop.txt', 'written-by-app.txt']]);
  assert.deepEqual(c.rescans, [['a.sync-conflict-20260101-000000-AAAAAAA.txt', 'deleted-on-laptop.txt']]);
  assert.deepEqual(
    c.changed.map((e) => e.name),
    ['written-by-app.txt', 'deleted-by-app.txt'],
  );
});

test('a copy that turns up after a clean listing (the laptop re-created a deleted file) is removed too', async () => {
  let probes = 0;
  const c = new FakeContainer([{ name: 'app.txt', copied: false }], 0, (self) => {
    probes++;
    // Between two looks the puller made a conflict copy of a stale file: the listing changed.
    if (probes === 2) self.changed.push({ name: 'x.sync-conflict-20260101-000000-AAAAAAA', copied: true });
    // Not caught up at first: the laptop is still sending.
    self.behind = probes <= 2;
  });
  c.stuck = ['on-its-way.txt'];
  const dropped = await settleReceiveOnly(c, 10_000, 'app');
  assert.deepEqual(dropped, ['x.sync-conflict-20260101-000000-AAAAAAA']);
});

test('an app writing on during the settle neither holds it up nor costs an exec per look', async () => {
  let looks = 0;
  const c = new FakeContainer([{ name: 'log.txt', copied: false }], 0, (self) => {
    looks++;
    // It appends to its log at every look: the listing's size and time change each time.
    self.changed = [{ name: 'log.txt', copied: false }];
  });
  const origProbe = c.probe.bind(c);
  c.probe = async () => ({ ...(await origProbe()), caughtUp: looks > 5 });
  assert.deepEqual(await settleReceiveOnly(c, 10_000, 'app'), []);
  assert.equal(c.drops.length, 1);
});

test('a container that needs nothing while the laptop sees it behind rescans what it lacks, after 5 s', async () => {
  const c = new FakeContainer([], 0);
  c.behind = true;
  c.stuck = ['d1/f1.txt'];
  const origProbe = c.probe.bind(c);
  c.probe = async () => {
    const p = await origProbe();
    return { ...p, caughtUp: !c.behind && p.caughtUp };
  };
  const reports: string[] = [];
  c.report = (d: string) => reports.push(d);
  assert.deepEqual(await settleReceiveOnly(c, 60_000, 'app'), []);
  assert.deepEqual(c.rescans, [['d1/f1.txt']]);
  assert.ok(c.time >= 5_000 && c.time < 6_000, `rescanned after ${c.time} ms`);
  assert.match(reports.join('\n'), /lacks \(as this machine sees it\): d1\/f1.txt; rescanned on both ends/);
});

test('the container’s own changes (an earlier up cut off, the app writing since) end the settle once nothing else is lacking', async () => {
  let probes = 0;
  const c = new FakeContainer(
    [
      { name: 'edited-in-container.txt', copied: false },
      { name: 'deleted-in-container.txt', copied: false, deleted: true },
    ],
    0,
    (self) => {
      probes++;
      // The laptop's last edit reaches the container at the 4th look; the laptop is busy until the 3rd.
      self.behind = probes < 4;
    },
  );
  c.stuck = ['edited-on-laptop.txt'];
  const origProbe = c.probe.bind(c);
  c.probe = async () => ({ ...(await origProbe()), localReady: probes >= 3 });
  const reports: string[] = [];
  c.report = (d: string) => reports.push(d);
  assert.deepEqual(await settleReceiveOnly(c, 60_000, 'app'), []);
  assert.equal(probes, 4, 'not before the laptop is idle and nothing but the container’s own work is lacking');
  assert.equal(c.drops.length, 1, 'offered once');
  assert.match(
    reports.join('\n'),
    /2 receive-only change\(s\) in the container are its own \(edited-in-container.txt, deleted-in-container.txt\); the switch announces them/,
  );
});

test('the laptop counting the container one item short while listing nothing it lacks: settled after 5 s, once both indexes are current', async () => {
  const c = new FakeContainer([], 0);
  c.behind = true; // and c.stuck is empty: nothing listed
  c.exchanged = false;
  const reports: string[] = [];
  c.report = (d: string) => reports.push(d);
  const origProbe = c.probe.bind(c);
  c.probe = async () => {
    if (c.time >= 8_000) c.exchanged = true;
    return origProbe();
  };
  assert.deepEqual(await settleReceiveOnly(c, 60_000, 'app'), []);
  assert.ok(c.time >= 8_000 && c.time < 8_500, `settled after ${c.time} ms`);
  assert.match(reports.join('\n'), /counts the container one item short .* yet lists nothing it lacks, and both indexes are current/);
});

test('never caught up: fails at the deadline saying where it stood; closed: fails at once', async () => {
  const c = new FakeContainer([{ name: 'a', copied: true }], 1_000_000);
  await assert.rejects(settleReceiveOnly(c, 5_000, '/src/app'), /first sync of \/src\/app did not finish in time \(1 receive-only\)/);
  assert.equal(c.drops.length, 0, 'nothing removed while the puller works');
  const d = new FakeContainer([], 1_000_000);
  d.isClosed = true;
  await assert.rejects(settleReceiveOnly(d, 5_000, '/src/app'), /was closed/);
});

test('drop-copied: NUL-separated names in, its JSON line out, in batches', async () => {
  assert.deepEqual([...dropInput(['a b', 'c\nd'])], [...Buffer.from('a b\0c\nd')]);
  assert.deepEqual(parseDropAnswer('noise\n{"removed":["a"],"manifest":true}\n'), { removed: ['a'], manifest: true });
  assert.throws(() => parseDropAnswer('{"removed":3}'), /unexpected answer/);

  const calls: { command: string[]; input: string }[] = [];
  const tunnel = {
    async runWithInput(command: string[], input: StdinWriter): Promise<ExecCapture> {
      const parts: Buffer[] = [];
      await input(async (m) => {
        parts.push(m.subarray(1)); // the headroom byte is the exec's channel number
      });
      const names = Buffer.concat(parts).toString('utf8').split('\0');
      calls.push({ command, input: names.join(',') });
      const removed = names.filter((n) => n.startsWith('copy'));
      return { code: 0, stdout: Buffer.from(`${JSON.stringify({ removed, manifest: true })}\n`), stderr: '' } as ExecCapture;
    },
  };
  const names = Array.from({ length: 450 }, (_, i) => (i % 2 ? `copy${i}` : `app${i}`));
  const removed = await dropCopied(tunnel, { agentPath: '/devtool/bin/devtool-agent', remoteDir: '/app', names, log: { info: () => undefined } });
  assert.equal(calls.length, 3);
  assert.deepEqual(calls[0]!.command, ['/devtool/bin/devtool-agent', 'drop-copied', '/app']);
  assert.equal(removed.length, 225);

  const failing = {
    async runWithInput(): Promise<ExecCapture> {
      return { code: 1, stdout: Buffer.alloc(0), stderr: 'devtool-agent drop-copied: permission denied\n' } as ExecCapture;
    },
  };
  await assert.rejects(
    dropCopied(failing, { agentPath: 'a', remoteDir: '/app', names: ['x'], log: { info: () => undefined } }),
    /cannot remove the stale copies in the container: devtool-agent drop-copied: permission denied/,
  );
});

test('settled: the agent forgets the copy; a dev pod being replaced is waited for; an agent that refuses is only logged', async () => {
  const calls: string[][] = [];
  const logged: string[] = [];
  const log = { info: (m: string) => logged.push(m) };
  let now = 0;
  const clock = {
    now: () => now,
    sleep: async (ms: number) => {
      now += ms;
    },
  };
  /** Each call's answer: an exec's result, or `{ throws }` for a rejection. */
  const answering = (...answers: (Partial<ExecCapture> | { throws: unknown })[]) => ({
    async runWithInput(command: string[]): Promise<ExecCapture> {
      calls.push(command);
      const a = answers.shift() ?? {};
      if ('throws' in a) throw a.throws;
      return { code: 0, stdout: Buffer.alloc(0), stderr: '', ...a } as ExecCapture;
    },
  });
  const o = { agentPath: '/devtool/bin/devtool-agent', remoteDir: '/app', log, deadline: 10_000, closed: () => false, clock };
  await forgetCopy(answering({}), o);
  assert.deepEqual(calls, [['/devtool/bin/devtool-agent', 'settled', '/app']]);

  // No dev pod for a moment, then an exec cut off (-1), then the new pod answers.
  calls.length = 0;
  const wsEvent = { type: 'error', message: 'socket hang up' }; // not an Error: a WebSocket's error event
  await forgetCopy(answering({ throws: new Error('no running dev pod') }, { code: -1, message: 'container not found' }, { throws: wsEvent }, {}), o);
  assert.equal(calls.length, 4);
  assert.deepEqual(logged, []);

  // The agent ran and said no (an older one): logged, not retried.
  calls.length = 0;
  await forgetCopy(answering({ code: 2, stderr: 'devtool-agent: unknown command "settled"\n' }), o);
  assert.equal(calls.length, 1);
  assert.deepEqual(logged, ['settled in /app failed: devtool-agent: unknown command "settled"']);

  // No pod until the deadline: the settle fails, saying why.
  now = 0;
  const never = { runWithInput: async (): Promise<ExecCapture> => Promise.reject(new Error('no running dev pod')) };
  await assert.rejects(forgetCopy(never, o), /^Error: cannot tell the container that the first sync of \/app settled: no running dev pod$/);
  assert.ok(now >= 10_000);
});
