import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  buildContextMode,
  commandShell,
  defaultDockerSocket,
  endsWithParent,
  executableName,
  hasPermissionBits,
  privateEndpoint,
  processTableSource,
  processTree,
  renameRefusedForNow,
  symlinkHint,
  syncthingPaths,
  syncedMode,
  textLines,
  userHome,
  watchLimit,
} from './platform.ts';

const system = () => 'SYSTEM-HOME';

test('the home folder: HOME on Linux and macOS, else the system one', () => {
  for (const platform of ['linux', 'darwin'] as const) {
    assert.equal(userHome({ HOME: '/home/ann' }, platform, system), '/home/ann');
    assert.equal(userHome({ HOME: '' }, platform, system), 'SYSTEM-HOME');
    assert.equal(userHome({}, platform, system), 'SYSTEM-HOME');
  }
});

test("the home folder on Windows: HOME only when it is a Windows path (Git Bash's /c/Users/ann is not), else USERPROFILE", () => {
  assert.equal(userHome({ USERPROFILE: 'C:\\Users\\Ann' }, 'win32', system), 'C:\\Users\\Ann');
  assert.equal(userHome({ HOME: '/c/Users/ann', USERPROFILE: 'C:\\Users\\Ann' }, 'win32', system), 'C:\\Users\\Ann');
  assert.equal(userHome({ HOME: '\\Users\\ann', USERPROFILE: 'C:\\Users\\Ann' }, 'win32', system), 'C:\\Users\\Ann');
  assert.equal(userHome({ HOME: 'D:\\home\\ann', USERPROFILE: 'C:\\Users\\Ann' }, 'win32', system), 'D:\\home\\ann');
  assert.equal(userHome({ HOME: 'D:/home/ann' }, 'win32', system), 'D:/home/ann');
  assert.equal(userHome({ HOME: '\\\\server\\home\\ann' }, 'win32', system), '\\\\server\\home\\ann');
  assert.equal(userHome({}, 'win32', system), 'SYSTEM-HOME');
});

test('program names end in .exe on Windows only', () => {
  assert.equal(executableName('syncthing', 'linux'), 'syncthing');
  assert.equal(executableName('syncthing', 'darwin'), 'syncthing');
  assert.equal(executableName('syncthing', 'win32'), 'syncthing.exe');
  assert.equal(executableName('syncthing.EXE', 'win32'), 'syncthing.EXE');
});

test('command lines come from /proc where there is one, ps on macOS, PowerShell on Windows', () => {
  assert.equal(processTableSource('linux', true), 'proc');
  assert.equal(processTableSource('linux', false), 'ps');
  assert.equal(processTableSource('darwin', false), 'ps');
  assert.equal(processTableSource('freebsd', false), 'ps');
  assert.equal(processTableSource('win32', false), 'windows');
});

test('a command and its children: a process group stopped by SIGTERM on POSIX, taskkill of the tree on Windows', () => {
  for (const platform of ['linux', 'darwin'] as const) {
    const tree = processTree(platform);
    assert.equal(tree.detached, true);
    assert.deepEqual(tree.stop(42), { kind: 'process-group', signal: 'SIGTERM' });
  }
  const windows = processTree('win32');
  assert.equal(windows.detached, false);
  assert.deepEqual(windows.stop(42), { kind: 'taskkill', program: 'taskkill', args: ['/pid', '42', '/t', '/f'] });
});

test('deploy commands run with sh everywhere; without one, Windows is told where to get it', () => {
  for (const platform of ['linux', 'darwin', 'win32'] as const) {
    const shell = commandShell('kubectl apply -f k8s/ | tee out', platform);
    assert.equal(shell.program, 'sh');
    assert.deepEqual(shell.args, ['-c', 'kubectl apply -f k8s/ | tee out']);
  }
  assert.equal(commandShell('x', 'linux').missing, 'deploy commands run with sh, which is not on PATH');
  assert.match(commandShell('x', 'win32').missing, /^deploy commands run with sh, which is not on PATH: install Git for Windows .*, or run devtool in WSL$/);
});

test('only Linux ties the local Syncthing to the life of `up`', () => {
  assert.equal(endsWithParent('linux'), true);
  assert.equal(endsWithParent('darwin'), false);
  assert.equal(endsWithParent('win32'), false);
});

test('the watcher runs out of inotify watches on Linux, of open files elsewhere, and says how to raise each', () => {
  assert.deepEqual(watchLimit('linux'), { what: 'inotify watches', raise: 'raise fs.inotify.max_user_watches (sysctl)' });
  assert.equal(watchLimit('darwin').what, 'open files');
  assert.match(watchLimit('darwin').raise, /ulimit -n/);
  assert.equal(watchLimit('win32').what, 'open files');
});

test("the Docker Engine's default address: the unix socket, Docker Desktop's named pipe on Windows", () => {
  assert.equal(defaultDockerSocket('linux'), '/var/run/docker.sock');
  assert.equal(defaultDockerSocket('darwin'), '/var/run/docker.sock');
  assert.equal(defaultDockerSocket('win32'), '//./pipe/docker_engine');
});

test('a private local endpoint: a unix socket in its folder on POSIX, a named pipe on Windows', () => {
  for (const platform of ['linux', 'darwin'] as const)
    assert.deepEqual(privateEndpoint('/tmp/devtool-build-x1', 'devtool-build-x1', platform), {
      listen: '/tmp/devtool-build-x1/buildkit.sock',
      address: 'unix:///tmp/devtool-build-x1/buildkit.sock',
      inFolder: true,
    });
  assert.deepEqual(privateEndpoint('C:\\Temp\\devtool-build-x1', 'devtool-build-x1', 'win32'), {
    listen: '\\\\.\\pipe\\devtool-build-x1',
    address: 'npipe:////./pipe/devtool-build-x1',
    inFolder: false,
  });
});

test("permission bits: kept where they mean something; on Windows Docker's 0755 in build contexts, Syncthing's 0644/0755 in the dev container", () => {
  assert.equal(hasPermissionBits('linux'), true);
  assert.equal(hasPermissionBits('darwin'), true);
  assert.equal(hasPermissionBits('win32'), false);
  for (const platform of ['linux', 'darwin'] as const) {
    assert.equal(buildContextMode(0o100754, platform), 0o754);
    assert.equal(buildContextMode(0o104755, platform), 0o4755);
    assert.equal(syncedMode(0o100640, false, platform), 0o640);
    assert.equal(syncedMode(0o40750, true, platform), 0o750);
  }
  // What Node reports on Windows: 0666 for a file, 0444 read-only, 0777 for a folder.
  assert.equal(buildContextMode(0o100666, 'win32'), 0o755);
  assert.equal(buildContextMode(0o100444, 'win32'), 0o755);
  assert.equal(syncedMode(0o100666, false, 'win32'), 0o644);
  assert.equal(syncedMode(0o40777, true, 'win32'), 0o755);
});

test('a refused symbolic link on Windows says what it needs', () => {
  assert.equal(symlinkHint('EPERM', 'linux'), '');
  assert.equal(symlinkHint('EEXIST', 'win32'), '');
  assert.equal(symlinkHint('EPERM', 'win32'), ' (on Windows, making symbolic links needs Developer Mode or administrator rights)');
});

test('a refused rename is tried again on Windows only', () => {
  for (const code of ['EPERM', 'EACCES', 'EBUSY']) {
    assert.equal(renameRefusedForNow(code, 'win32'), true);
    assert.equal(renameRefusedForNow(code, 'linux'), false);
    assert.equal(renameRefusedForNow(code, 'darwin'), false);
  }
  assert.equal(renameRefusedForNow('ENOENT', 'win32'), false);
});

test("paths to and from Syncthing: its own separator on Windows, devtool's / everywhere", () => {
  for (const platform of ['linux', 'darwin'] as const) {
    const paths = syncthingPaths(platform);
    assert.equal(paths.toSyncthing('src/a b.ts'), 'src/a b.ts');
    assert.equal(paths.fromSyncthing('src/a\\b.ts'), 'src/a\\b.ts', 'a backslash is part of a name there');
  }
  const windows = syncthingPaths('win32');
  assert.equal(windows.toSyncthing('src/lib/a.ts'), 'src\\lib\\a.ts');
  assert.equal(windows.fromSyncthing('src\\lib\\a.sync-conflict-20261202-010203-ABCDEFG.ts'), 'src/lib/a.sync-conflict-20261202-010203-ABCDEFG.ts');
});

test('lines of a text file with \\n or \\r\\n endings', () => {
  assert.deepEqual(textLines('a\r\nb\nc\r\n'), ['a', 'b', 'c', '']);
  assert.deepEqual(textLines('a\rb'), ['a\rb']);
});
