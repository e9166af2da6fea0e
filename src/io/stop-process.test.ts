import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DevState, isDevtoolUp } from '../dev/local-state.ts';
import { stopProcess, systemProcesses, windowsArgv, windowsCommandLine, windowsQuery, type ProcessTable } from './stop-process.ts';

const UP = ['node', '/opt/devtool/dist/devtool.cjs', 'up', '-n', 'ann'];

/**
 * An in-memory process table with its own clock: each process ends so many milliseconds after a
 * signal (never, if absent), or keeps running; signals are recorded.
 */
function fakeProcesses(procs: Record<number, { args: string[] | null; endsAfter?: Partial<Record<'SIGTERM' | 'SIGKILL', number>>; refuse?: string }>) {
  let now = 0;
  const endsAt = new Map<number, number>();
  const signals: string[] = [];
  const table: ProcessTable = {
    commandLine(pid) {
      const p = procs[pid];
      if (!p || (endsAt.has(pid) && now >= endsAt.get(pid)!)) return undefined;
      return p.args;
    },
    signal(pid, signal) {
      const p = procs[pid];
      if (!p || (endsAt.has(pid) && now >= endsAt.get(pid)!)) throw Object.assign(new Error('kill ESRCH'), { code: 'ESRCH' });
      if (p.refuse) throw Object.assign(new Error(`kill ${p.refuse}`), { code: p.refuse });
      signals.push(`${signal} ${pid} at ${now}ms`);
      const after = p.endsAfter?.[signal];
      if (after !== undefined) endsAt.set(pid, Math.min(endsAt.get(pid) ?? Infinity, now + after));
    },
    sleep: async (ms) => {
      now += ms;
    },
  };
  return { table, signals, now: () => now };
}

test('an up that ends on SIGTERM is stopped without SIGKILL', async () => {
  const p = fakeProcesses({ 41: { args: UP, endsAfter: { SIGTERM: 800 } } });
  assert.deepEqual(await stopProcess(41, { isOurs: isDevtoolUp, graceMs: 5000, processes: p.table }), { outcome: 'stopped', killed: false });
  assert.deepEqual(p.signals, ['SIGTERM 41 at 0ms']);
  assert.ok(p.now() >= 800 && p.now() < 1000, 'it waited for the exit, not the whole grace period');
});

test('an up still running after the grace period is killed, and only called stopped once it is gone', async () => {
  const p = fakeProcesses({ 42: { args: UP, endsAfter: { SIGKILL: 10 } } });
  assert.deepEqual(await stopProcess(42, { isOurs: isDevtoolUp, graceMs: 5000, processes: p.table }), { outcome: 'stopped', killed: true });
  assert.deepEqual(p.signals, ['SIGTERM 42 at 0ms', 'SIGKILL 42 at 5000ms']);
});

test('one that outlives SIGKILL too is reported as still running', async () => {
  const p = fakeProcesses({ 43: { args: UP } });
  const r = await stopProcess(43, { isOurs: isDevtoolUp, graceMs: 5000, processes: p.table });
  assert.deepEqual(r, { outcome: 'still-running', reason: 'it was still there 2s after SIGKILL' });
});

test('a stale PID, or one now used by another program, is not signalled', async () => {
  const p = fakeProcesses({ 44: { args: ['/usr/bin/vim', 'notes.txt'] } });
  assert.deepEqual(await stopProcess(44, { isOurs: isDevtoolUp, graceMs: 5000, processes: p.table }), { outcome: 'not-running' });
  assert.deepEqual(await stopProcess(45, { isOurs: isDevtoolUp, graceMs: 5000, processes: p.table }), { outcome: 'not-running' });
  assert.deepEqual(p.signals, []);
});

test('where the system cannot tell what runs under the PID, nothing is signalled and it is not called stopped', async () => {
  const p = fakeProcesses({ 46: { args: null, endsAfter: { SIGTERM: 0 } } });
  const r = await stopProcess(46, { isOurs: isDevtoolUp, graceMs: 5000, processes: p.table });
  assert.equal(r.outcome, 'still-running');
  assert.deepEqual(p.signals, []);
});

test('a process not ours to signal is reported, not called stopped', async () => {
  const p = fakeProcesses({ 47: { args: UP, refuse: 'EPERM' } });
  assert.deepEqual(await stopProcess(47, { isOurs: isDevtoolUp, graceMs: 5000, processes: p.table }), {
    outcome: 'still-running',
    reason: 'SIGTERM failed (EPERM)',
  });
});

test('the PID file of the dev environment: its own process or no file is nothing to stop', async () => {
  const state = new DevState(join(mkdtempSync(join(tmpdir(), 'devstate-')), 'k'));
  const p = fakeProcesses({ 48: { args: UP, endsAfter: { SIGTERM: 100 } } });
  assert.equal(await state.stopHolder({ processes: p.table }), undefined);
  state.lock('api');
  assert.equal(await state.stopHolder({ processes: p.table }), undefined, 'down never stops itself');
  writeFileSync(state.pidFile, '48\n');
  assert.deepEqual(await state.stopHolder({ processes: p.table }), { pid: 48, outcome: 'stopped', killed: false });
});

test('on this machine: a process that has exited but whose parent has not reaped it counts as gone', {
  skip: process.platform !== 'linux' && 'Linux /proc',
}, async (t) => {
  // The shell starts `sleep 30` and becomes `sleep 60`, which never reaps it: once ended, it stays
  // a zombie, which process.kill(pid, 0) still finds.
  const parent = spawn('sh', ['-c', 'sleep 30 & echo $!; exec sleep 60']);
  t.after(() => parent.kill('SIGKILL'));
  const pid = Number(await new Promise<string>((r) => parent.stdout.once('data', (d: Buffer) => r(d.toString()))));
  const isSleep = (args: readonly string[]) => args[0] === 'sleep' && args[1] === '30';
  // Until the forked shell has exec'd sleep, it is still `sh`.
  for (let i = 0; i < 200 && !isSleep(systemProcesses.commandLine(pid) ?? []); i++) await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(systemProcesses.commandLine(pid), ['sleep', '30']);
  assert.deepEqual(await stopProcess(pid, { isOurs: isSleep, graceMs: 2000 }), { outcome: 'stopped', killed: false });
  // Once it has finished exiting it is a zombie: still in the process table, and gone to us.
  const state = () => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]![0];
  for (let i = 0; i < 200 && state() !== 'Z'; i++) await new Promise((r) => setTimeout(r, 10));
  process.kill(pid, 0);
  assert.equal(systemProcesses.commandLine(pid), undefined);
});

test('Windows command lines split as the C runtime splits them', () => {
  assert.deepEqual(windowsArgv('"C:\\Program Files\\devtool\\syncthing.exe" serve --home=C:\\Users\\Ann\\.devtool\\dev\\k\\syncthing'), [
    'C:\\Program Files\\devtool\\syncthing.exe',
    'serve',
    '--home=C:\\Users\\Ann\\.devtool\\dev\\k\\syncthing',
  ]);
  assert.deepEqual(windowsArgv('node.exe  "C:\\a b\\devtool.cjs"\tup'), ['node.exe', 'C:\\a b\\devtool.cjs', 'up']);
  // 2n backslashes before a quote: n, and the quote closes; 2n+1: n and a literal quote.
  assert.deepEqual(windowsArgv('a "b\\\\" c'), ['a', 'b\\', 'c']);
  assert.deepEqual(windowsArgv('a b\\"c'), ['a', 'b"c']);
  assert.deepEqual(windowsArgv('"a ""quoted"" word" ""'), ['a "quoted" word', '']);
  assert.deepEqual(windowsArgv(''), []);
});

test('Windows: a process PowerShell does not find is gone; one whose command line it may not show is not ours; a failing PowerShell cannot tell', () => {
  const table = windowsCommandLine((pid) =>
    pid === 1
      ? { status: 0, stdout: '' }
      : pid === 2
        ? { status: 0, stdout: '+\r\n' }
        : pid === 3
          ? { status: 1, stdout: '' }
          : { status: null, stdout: '', error: new Error('spawn powershell.exe ENOENT') },
  );
  assert.equal(table(1), undefined);
  assert.deepEqual(table(2), []);
  assert.equal(table(3), null);
  assert.equal(table(4), null);
  assert.equal(windowsQuery(42.7), "$p = Get-CimInstance Win32_Process -Filter 'ProcessId=42'; if ($p) { '+' + $p.CommandLine }");
});
