/**
 * What differs between the operating systems the CLI runs on (Linux, macOS, Windows), in one
 * place. Each decision is a pure function of the platform (and, where it matters, the
 * environment), so tests state the answer for every platform on any machine; callers pass
 * nothing and get this machine's (`hostPlatform`). docs/portability.md says what each means.
 */
import { homedir } from 'node:os';
import { win32 } from 'node:path';

/** This machine's platform: the only reading of process.platform the CLI's code needs. */
export const hostPlatform: NodeJS.Platform = process.platform;

/**
 * The user's home folder: HOME, else the system's (os.homedir()). On Windows HOME is set only by
 * POSIX-style shells (Git Bash, MSYS2, Cygwin), sometimes as `/c/Users/me`, a path Windows
 * programs cannot open; it counts there only when it is a Windows path, else USERPROFILE, which
 * os.homedir() also reads.
 */
export function userHome(env: Readonly<NodeJS.ProcessEnv>, platform: NodeJS.Platform = hostPlatform, systemHome: () => string = homedir): string {
  const home = env.HOME?.trim();
  if (platform !== 'win32') return home || systemHome();
  if (home && isWindowsAbsolute(home)) return home;
  return env.USERPROFILE?.trim() || systemHome();
}

/** `C:\x`, `C:/x` or a UNC path `\\server\share`; not `/c/x` or `\x` (relative to the current drive). */
function isWindowsAbsolute(path: string): boolean {
  return /^[A-Za-z]:[\\/]/.test(path) || (win32.isAbsolute(path) && /^[\\/]{2}[^\\/]/.test(path));
}

/** A program's file name: `.exe` on Windows. */
export function executableName(name: string, platform: NodeJS.Platform = hostPlatform): string {
  return platform === 'win32' && !name.toLowerCase().endsWith('.exe') ? `${name}.exe` : name;
}

/**
 * Where a process's command line is read from: /proc (Linux, or any system that has one), `ps`
 * (macOS and the BSDs), PowerShell's Win32_Process (Windows).
 */
export type ProcessTableSource = 'proc' | 'ps' | 'windows';

export function processTableSource(platform: NodeJS.Platform, hasProc: boolean): ProcessTableSource {
  if (platform === 'win32') return 'windows';
  return hasProc ? 'proc' : 'ps';
}

/**
 * How a command with children (a deploy command's shell and its pipeline) is started and stopped
 * as a whole. POSIX: in its own process group (`detached`), stopped by SIGTERM to the group.
 * Windows has neither groups nor SIGTERM (process.kill ends one process at once, never its
 * children): the tree is ended by `taskkill /T /F`, and `detached` there would open a console
 * window of its own.
 */
export type TreeStop = { kind: 'process-group'; signal: 'SIGTERM' } | { kind: 'taskkill'; program: string; args: string[] };

export function processTree(platform: NodeJS.Platform = hostPlatform): { detached: boolean; stop(pid: number): TreeStop } {
  if (platform === 'win32') return { detached: false, stop: (pid) => ({ kind: 'taskkill', program: 'taskkill', args: ['/pid', String(pid), '/t', '/f'] }) };
  return { detached: true, stop: () => ({ kind: 'process-group', signal: 'SIGTERM' }) };
}

/**
 * The shell that runs a manifest's deploy and destroy commands: `sh -c` everywhere, as the
 * manifest documents, so a command means the same on every machine (cmd.exe and PowerShell would
 * each read it otherwise). On Windows, `sh` comes from Git for Windows or MSYS2; `missing` is the
 * one line said when there is none.
 */
export function commandShell(command: string, platform: NodeJS.Platform = hostPlatform): { program: string; args: string[]; missing: string } {
  const missing =
    platform === 'win32'
      ? 'deploy commands run with sh, which is not on PATH: install Git for Windows and put its usr\\bin folder on PATH, or run devtool in WSL'
      : 'deploy commands run with sh, which is not on PATH';
  return { program: 'sh', args: ['-c', command], missing };
}

/**
 * Whether the local Syncthing can be tied to this process's life by the agent's `with-parent`
 * (Linux's parent-death signal, prctl PR_SET_PDEATHSIG): elsewhere it runs directly, and a
 * killed `up` leaves it to its PID file (the next `up` or `down` stops it).
 */
export function endsWithParent(platform: NodeJS.Platform = hostPlatform): boolean {
  return platform === 'linux';
}

/**
 * What the local file watcher (one watch per folder) runs out of, and how to raise it: inotify
 * watches on Linux; elsewhere each watched folder holds an open file (kqueue on macOS, a
 * directory handle on Windows), so the open-file limit.
 */
export function watchLimit(platform: NodeJS.Platform = hostPlatform): { what: string; raise: string } {
  if (platform === 'linux') return { what: 'inotify watches', raise: 'raise fs.inotify.max_user_watches (sysctl)' };
  if (platform === 'darwin') return { what: 'open files', raise: "raise the open-file limit ('ulimit -n', and 'launchctl limit maxfiles')" };
  return { what: 'open files', raise: 'close other programs watching many files' };
}

/** Folder-relative paths between devtool (always `/`) and a Syncthing of this platform. */
export interface SyncthingPaths {
  toSyncthing(path: string): string;
  fromSyncthing(path: string): string;
}

/**
 * Syncthing keeps and reports paths with the system's separator, `\` on Windows (its index,
 * `/rest/db/need`, `/rest/db/file`, events). devtool's paths are `/`-separated everywhere (the
 * container's are Linux paths), so a local Syncthing's are turned at its REST API; `\` cannot be
 * part of a name on Windows, so nothing is lost.
 */
export function syncthingPaths(platform: NodeJS.Platform = hostPlatform): SyncthingPaths {
  if (platform !== 'win32') return { toSyncthing: (p) => p, fromSyncthing: (p) => p };
  return { toSyncthing: (p) => p.replaceAll('/', '\\'), fromSyncthing: (p) => p.replaceAll('\\', '/') };
}

/** The Docker Engine's socket when DOCKER_HOST is unset: a named pipe on Windows (Docker Desktop's). */
export function defaultDockerSocket(platform: NodeJS.Platform = hostPlatform): string {
  return platform === 'win32' ? '//./pipe/docker_engine' : '/var/run/docker.sock';
}

/**
 * A private local endpoint for a program that dials it (the build tunnel's, for the BuildKit
 * client): a unix socket in a fresh 0700 folder on POSIX; on Windows, where Node listens on
 * named pipes but not on unix sockets, a named pipe of a random name (its default security lets
 * only its creator and administrators connect for writing).
 * `listen` is what node:net listens on, `address` what BuildKit's client dials.
 */
export function privateEndpoint(
  folder: string,
  uniqueName: string,
  platform: NodeJS.Platform = hostPlatform,
): { listen: string; address: string; inFolder: boolean } {
  if (platform === 'win32') return { listen: `\\\\.\\pipe\\${uniqueName}`, address: `npipe:////./pipe/${uniqueName}`, inFolder: false };
  const listen = `${folder}/buildkit.sock`;
  return { listen, address: `unix://${listen}`, inFolder: true };
}

/**
 * Whether file permission bits mean anything here. On Windows, Node reports 0o666 (0o444
 * read-only) for every file and 0o777 for folders, and chmod only toggles read-only: no bit of a
 * file says whether it runs, and 0600 protects nothing (a file under the user's profile is the
 * user's by its folder's access control list).
 */
export function hasPermissionBits(platform: NodeJS.Platform = hostPlatform): boolean {
  return platform !== 'win32';
}

/**
 * The mode a file or folder of this machine gets in a build context's tar. Where the bits mean
 * nothing (Windows), Docker's own rule: 0755 for everything, so a script COPY'd into an image
 * still runs.
 */
export function buildContextMode(mode: number, platform: NodeJS.Platform = hostPlatform): number {
  return hasPermissionBits(platform) ? mode & 0o7777 : 0o755;
}

/**
 * The mode a file or folder of this machine gets in the dev container when the first sync of a
 * new volume sends it by tar. Where the bits mean nothing (Windows), what Syncthing gives a file
 * that came without permissions: 0644 for files, 0755 for folders.
 */
export function syncedMode(mode: number, isFolder: boolean, platform: NodeJS.Platform = hostPlatform): number {
  if (hasPermissionBits(platform)) return mode & 0o777;
  return isFolder ? 0o755 : 0o644;
}

/**
 * What to add to a refused symlink(): on Windows, making one needs Developer Mode or
 * administrator rights (SeCreateSymbolicLinkPrivilege), which EPERM does not say.
 */
export function symlinkHint(code: string | undefined, platform: NodeJS.Platform = hostPlatform): string {
  return platform === 'win32' && code === 'EPERM' ? ' (on Windows, making symbolic links needs Developer Mode or administrator rights)' : '';
}

/**
 * Whether a failed rename may succeed if tried again shortly: on Windows, a file another program
 * has open without sharing deletion (virus scanners and indexers open new files at once) refuses
 * to be replaced for a moment (EPERM, EACCES or EBUSY). Elsewhere those errors are final.
 */
export function renameRefusedForNow(code: string | undefined, platform: NodeJS.Platform = hostPlatform): boolean {
  return platform === 'win32' && (code === 'EPERM' || code === 'EACCES' || code === 'EBUSY');
}

/**
 * Text files the CLI writes (devtool.yml, .stignore, kubeconfig entries, state files) use `\n`
 * on every platform: every editor and tool it shares them with reads it, and the same bytes on
 * every machine keep a committed file unchanged. Files it reads may have `\r\n` (an editor on
 * Windows, git's autocrlf): these are the lines without it.
 */
export function textLines(text: string): string[] {
  return text.split(/\r?\n/);
}
