/**
 * indexesExchanged against two in-memory ends whose received sequences lag behind: it waits until
 * each end has what the other had indexed when it was asked (not a moment longer while files keep
 * changing), and says where it stood when the deadline passes.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { indexesExchanged, readSettled, receivedFrom, scanAndExchange, scanWait, type SyncEnd, type SyncEnds } from './exchange.ts';
import type { FolderStatus } from './rest.ts';

const LOCAL = 'AAAAAAA-AAAAAAA-AAAAAAA-AAAAAAA-AAAAAAA-AAAAAAA-AAAAAAA-AAAAAAA';
const REMOTE = 'BBBBBBB-BBBBBBB-BBBBBBB-BBBBBBB-BBBBBBB-BBBBBBB-BBBBBBB-BBBBBBB';

/** One end: its own sequence, and how much of the peer's it has received (advanced by `tick`). */
class FakeEnd implements SyncEnd {
  scans = 0;
  received = 0;
  constructor(
    public sequence: number,
    private readonly peer: string,
  ) {}
  async status(): Promise<FolderStatus> {
    return { state: 'idle', sequence: this.sequence, remoteSequence: { [this.peer.toLowerCase()]: this.received } } as unknown as FolderStatus;
  }
  scanWaits: (number | undefined)[] = [];
  async scan(_folder: string, _subs?: readonly string[], timeoutMs?: number): Promise<void> {
    this.scans++;
    this.scanWaits.push(timeoutMs);
  }
  async connected(): Promise<boolean> {
    return true;
  }
}

function ends(local: FakeEnd, remote: FakeEnd, onSleep: () => void, clock = { t: 0 }): SyncEnds {
  return {
    local,
    remote,
    localDevice: LOCAL,
    remoteDevice: REMOTE,
    closed: () => false,
    sleep: async (ms) => {
      clock.t += ms;
      onSleep();
    },
    now: () => clock.t,
  };
}

test('waits until each end has received what the other had indexed, device IDs in any case', async () => {
  const local = new FakeEnd(40, REMOTE);
  const remote = new FakeEnd(1500, LOCAL);
  let polls = 0;
  await indexesExchanged(
    ends(local, remote, () => {
      polls++;
      local.received = Math.min(1500, local.received + 500);
      remote.received = Math.min(40, remote.received + 20);
    }),
    'f',
    10_000,
  );
  assert.equal(polls, 3, 'returned as soon as 1500 and 40 were reached, not before');
});

test('changes made after the call do not move the goal', async () => {
  const local = new FakeEnd(10, REMOTE);
  const remote = new FakeEnd(100, LOCAL);
  await indexesExchanged(
    ends(local, remote, () => {
      // The app in the container keeps writing: its sequence grows faster than we receive.
      remote.sequence += 50;
      local.received += 40;
      remote.received = 10;
    }),
    'f',
    10_000,
  );
  assert.ok(local.received >= 100 && local.received < remote.sequence);
});

test('past the deadline it fails and says how far each end got', async () => {
  const local = new FakeEnd(7, REMOTE);
  const remote = new FakeEnd(1001, LOCAL);
  local.received = 1000;
  remote.received = 7;
  await assert.rejects(
    indexesExchanged(
      ends(local, remote, () => undefined),
      'f',
      1_000,
    ),
    /did not exchange their file lists in time \(this machine has the container's changes up to 1000 of 1001, the container has this machine's up to 7 of 7\)/,
  );
});

test('scanAndExchange scans both ends first', async () => {
  const local = new FakeEnd(0, REMOTE);
  const remote = new FakeEnd(0, LOCAL);
  await scanAndExchange(
    ends(local, remote, () => undefined),
    'f',
    1_000,
  );
  assert.deepEqual([local.scans, remote.scans], [1, 1]);
});

test('whole-folder scans wait until the deadline, at least a minute (a first scan of 40,000 files took one)', async () => {
  const local = new FakeEnd(0, REMOTE);
  const remote = new FakeEnd(0, LOCAL);
  await scanAndExchange(
    ends(local, remote, () => undefined, { t: 1_000 }),
    'f',
    301_000,
  );
  assert.deepEqual([local.scanWaits, remote.scanWaits], [[300_000], [300_000]]);
  assert.equal(scanWait({ now: () => 1_000 }, 2_000), 60_000);
});

test('a peer never heard of has sent nothing', () => {
  assert.equal(receivedFrom({ remoteSequence: null } as unknown as FolderStatus, REMOTE), 0);
});

/**
 * A need list served in pages, each from the index as it is at that moment, as Syncthing serves
 * it. `onPage` runs after each page is served: there the container may resolve a conflict, which
 * takes entries out of the list and moves this end's received sequence.
 */
function pagedNeed(list: string[], perPage: number, onPage: (page: number) => void) {
  return async (): Promise<string[]> => {
    const all: string[] = [];
    for (let page = 1; ; page++) {
      const items = list.slice((page - 1) * perPage, page * perPage);
      onPage(page);
      all.push(...items);
      if (items.length < perPage) return all;
    }
  };
}

test('readSettled: an index update between two pages made the read skip entries; the list is read again', async () => {
  /** 25 needed files, and the container taking this machine's f01 and f02 just after page 1 is served, once. */
  const world = () => {
    const local = new FakeEnd(0, REMOTE);
    const list = Array.from({ length: 25 }, (_, i) => `f${String(i).padStart(2, '0')}`);
    let updated = false;
    const read = pagedNeed(list, 10, (page) => {
      if (page !== 1 || updated) return;
      updated = true;
      list.splice(1, 2);
      local.received += 1;
    });
    return { local, list, read };
  };
  const naive = world();
  const once = await naive.read();
  assert.ok(!once.includes('f10') && !once.includes('f11'), `the list read once skips the entries that moved over the page boundary: ${once.join(' ')}`);

  const w = world();
  const settled = await readSettled(
    ends(w.local, new FakeEnd(0, LOCAL), () => undefined),
    'f',
    w.read,
    10_000,
  );
  assert.deepEqual(settled, w.list, 'read again from one state: every entry');
  assert.ok(settled.includes('f10') && settled.includes('f11'));
});

test('readSettled fails past the deadline when the list never holds still, and says so', async () => {
  const local = new FakeEnd(0, REMOTE);
  const remote = new FakeEnd(0, LOCAL);
  const read = async () => {
    local.sequence++;
    return ['a'];
  };
  await assert.rejects(
    readSettled(
      ends(local, remote, () => undefined),
      'f',
      read,
      1_000,
    ),
    /file lists of folder f kept changing while read \(\d+ reads\)/,
  );
});
