import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { PidFile } from './pid-file.ts';
import { procCommandLine, psCommandLine, windowsCommandLine, type ProcessTable, type PsOutput } from './stop-process.ts';

const SYNCTHING = ['/home/ann/.devtool/bin/syncthing', 'serve', '--home=/state/syncthing', '--no-browser'];
const isOurs = (args: readonly string[]) => args.includes('--home=/state/syncthing');

/** A process list, one entry per PID: its arguments until it ends (on SIGTERM, if it does). */
type Procs = Map<number, { args: string[]; endsOnTerm: boolean }>;

/**
 * Two ways of reading the same process list, as the two kinds of system do: a folder laid out like
 * Linux's /proc, and a `ps` that prints what macOS's does. Signals end a process in both.
 */
function systems(t: TestContext, procs: Procs) {
  const root = mkdtempSync(join(tmpdir(), 'fake-proc-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const signals: string[] = [];
  const writeProc = () => {
    rmSync(root, { recursive: true, force: true });
    for (const [pid, p] of procs) {
      mkdirSync(join(root, String(pid)), { recursive: true });
      writeFileSync(join(root, String(pid), 'stat'), `${pid} (${p.args[0]!.split('/').at(-1)}) S 1 ${pid} ${pid} 0 -1`);
      writeFileSync(join(root, String(pid), 'cmdline'), `${p.args.join('\0')}\0`);
    }
  };
  writeProc();
  const signal: ProcessTable['signal'] = (pid, sig) => {
    const p = procs.get(pid);
    if (!p) throw Object.assign(new Error('kill ESRCH'), { code: 'ESRCH' });
    signals.push(`${sig} ${pid}`);
    if (sig === 'SIGKILL' || p.endsOnTerm) procs.delete(pid);
    writeProc();
  };
  const sleep = async () => undefined;
  const ps = (pid: number): PsOutput => {
    const p = procs.get(pid);
    return p ? { status: 0, stdout: `S    ${p.args.join(' ')}\n` } : { status: 1, stdout: '' };
  };
  // PowerShell's Win32_Process query: `+` and the command line as Windows keeps it, quoted.
  const powershell = (pid: number): PsOutput => {
    const p = procs.get(pid);
    return { status: 0, stdout: p ? `+${p.args.map((a) => (a.includes(' ') ? `"${a}"` : a)).join(' ')}\r\n` : '' };
  };
  return {
    signals,
    linux: { commandLine: procCommandLine(root), signal, sleep } satisfies ProcessTable,
    withoutProc: { commandLine: psCommandLine(ps), signal, sleep } satisfies ProcessTable,
    windows: { commandLine: windowsCommandLine(powershell), signal, sleep } satisfies ProcessTable,
  };
}

function pidFileIn(t: TestContext, processes: ProcessTable): PidFile {
  const dir = mkdtempSync(join(tmpdir(), 'pid-file-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return new PidFile(join(dir, 'syncthing.pid'), { isOurs, processes });
}

for (const system of ['linux', 'withoutProc', 'windows'] as const) {
  const name = { linux: 'Linux (/proc)', withoutProc: 'a system without /proc (ps)', windows: 'Windows (PowerShell)' }[system];

  test(`${name}: the process the PID file names is stopped while it is ours, and the file removed`, async (t) => {
    const s = systems(t, new Map([[700, { args: SYNCTHING, endsOnTerm: true }]]));
    const file = pidFileIn(t, s[system]);
    file.write(700);
    assert.equal(file.live(), 700);
    assert.deepEqual(await file.stop({ graceMs: 5_000 }), { pid: 700, outcome: 'stopped', killed: false });
    assert.deepEqual(s.signals, ['SIGTERM 700']);
    assert.equal(existsSync(file.path), false);
    assert.equal(file.live(), undefined);
  });

  test(`${name}: one that ignores SIGTERM is killed`, async (t) => {
    const s = systems(t, new Map([[701, { args: SYNCTHING, endsOnTerm: false }]]));
    const file = pidFileIn(t, s[system]);
    file.write(701);
    assert.deepEqual(await file.stop({ graceMs: 1_000 }), { pid: 701, outcome: 'stopped', killed: true });
    assert.deepEqual(s.signals, ['SIGTERM 701', 'SIGKILL 701']);
    assert.equal(existsSync(file.path), false);
  });

  test(`${name}: a stale PID file, whose PID another program now has, signals nothing and is removed`, async (t) => {
    const s = systems(t, new Map([[702, { args: ['/usr/bin/vim', 'notes.txt'], endsOnTerm: true }]]));
    const file = pidFileIn(t, s[system]);
    file.write(702);
    assert.deepEqual(await file.stop({ graceMs: 5_000 }), { pid: 702, outcome: 'not-running' });
    file.write(703);
    assert.deepEqual(await file.stop({ graceMs: 5_000 }), { pid: 703, outcome: 'not-running' }, 'a PID nothing runs under');
    assert.deepEqual(s.signals, []);
    assert.equal(existsSync(file.path), false);
  });

  test(`${name}: a process never stops itself; no file, or a file without a PID, is nothing to stop`, async (t) => {
    const s = systems(t, new Map([[704, { args: SYNCTHING, endsOnTerm: true }]]));
    const file = pidFileIn(t, s[system]);
    assert.equal(await file.stop({ graceMs: 5_000 }), undefined);
    writeFileSync(file.path, 'garbage\n');
    assert.equal(file.read(), undefined);
    assert.equal(await file.stop({ graceMs: 5_000 }), undefined);
    file.write(704);
    assert.equal(await file.stop({ graceMs: 5_000, except: 704 }), undefined);
    assert.deepEqual(s.signals, []);
    assert.equal(file.read(), 704);
  });
}

test('a system without /proc where ps cannot tell: nothing is signalled, the file is kept for the next attempt', async (t) => {
  const signals: string[] = [];
  const processes: ProcessTable = {
    commandLine: psCommandLine(() => ({ status: null, stdout: '', error: new Error('spawn ps ENOENT') })),
    signal: (pid, sig) => void signals.push(`${sig} ${pid}`),
    sleep: async () => undefined,
  };
  const file = pidFileIn(t, processes);
  file.write(705);
  const r = await file.stop({ graceMs: 5_000 });
  assert.equal(r?.outcome, 'still-running');
  assert.deepEqual(signals, []);
  assert.equal(file.read(), 705);
  assert.equal(file.live(), 705, 'as a lock it counts as held: two live ups must not share a folder');
});

test('release removes the file only while it still names the process that wrote it', (t) => {
  const file = pidFileIn(t, { commandLine: () => undefined, signal: () => undefined, sleep: async () => undefined });
  file.write(706);
  file.release(707);
  assert.equal(file.read(), 706);
  file.release(706);
  assert.equal(existsSync(file.path), false);
});

test('a zombie in /proc (ended, not reaped) counts as gone', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'fake-proc-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, '708'));
  writeFileSync(join(root, '708', 'stat'), '708 (sync thing) Z 1 708 708 0 -1');
  writeFileSync(join(root, '708', 'cmdline'), '');
  assert.equal(procCommandLine(root)(708), undefined);
});
