/**
 * Where the local Syncthing's REST API is, and the guarantee that its API key goes nowhere else.
 *
 * The local Syncthing binds port 0 (syncthing-config.ts): the kernel picks a free port as it binds, so no
 * other program can take the port between our choice and Syncthing's bind (picking a free port
 * first and handing it over had that window). Syncthing prints the port it got ("GUI and API
 * listening on 127.0.0.1:PORT", lib/api/api.go in v1.30.0) into its log, which LocalSyncthing
 * follows after every start (each start gets a new port).
 *
 * The port is freed again when that Syncthing exits (it is restarted with backoff) or restarts its
 * API; a program could bind it then and receive the next request. So every request first checks,
 * where /proc tells (Linux), that the listening socket on the port is held by our Syncthing's
 * process, and sends nothing otherwise. What remains is the time between that check and the
 * connection (well under a millisecond), in which Syncthing would have to exit and another
 * program bind the same port. Without /proc (macOS) the check is skipped: there the address is
 * only dropped when `up` sees its Syncthing exit.
 */
import { readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../io/atomic-file.ts';
import { systemProcesses, type ProcessTable } from '../io/stop-process.ts';
import { syncthingPaths, type SyncthingPaths } from '../base/platform.ts';
import { SyncthingApi } from './rest.ts';

/** The running local Syncthing: its process and the port its REST API listens on. */
export interface LocalAddress {
  readonly pid: number;
  readonly port: number;
}

/** In the dev environment's state folder while a local Syncthing listens: what `status` reads. */
export const ADDRESS_FILE = 'syncthing-address.json';

const GUI_LISTENING = /INFO: GUI and API listening on 127\.0\.0\.1:(\d+)\s*$/;

/** The port of the last "GUI and API listening on 127.0.0.1:PORT" among these log lines. */
export function guiPortFromLog(lines: readonly string[]): number | undefined {
  let port: number | undefined;
  for (const line of lines) {
    const m = GUI_LISTENING.exec(line);
    if (m) port = Number(m[1]);
  }
  return port !== undefined && port > 0 && port < 65536 ? port : undefined;
}

export function writeAddressFile(stateDir: string, address: LocalAddress): void {
  writeFileAtomic(join(stateDir, ADDRESS_FILE), JSON.stringify(address), 0o600);
}

export function removeAddressFile(stateDir: string): void {
  rmSync(join(stateDir, ADDRESS_FILE), { force: true });
}

/**
 * Whether a process's arguments are those of the local Syncthing of this state folder. The home is
 * looked for in the whole command line: `ps` (macOS) prints the arguments joined by spaces, so a
 * home under `/Users/Ann Lee` arrives split in two.
 */
export function isLocalSyncthingOf(stateDir: string): (args: readonly string[]) => boolean {
  const home = join(stateDir, 'syncthing');
  return (args) => args.some((a) => a.includes('syncthing')) && args.join(' ').includes(home);
}

/** What `status` uses: the address `up` recorded, if the process there is still a Syncthing of this state folder. */
export function recordedAddress(stateDir: string, processes: ProcessTable = systemProcesses): LocalAddress | undefined {
  try {
    const a = JSON.parse(readFileSync(join(stateDir, ADDRESS_FILE), 'utf8')) as LocalAddress;
    if (!Number.isInteger(a.pid) || !Number.isInteger(a.port)) return undefined;
    const args = processes.commandLine(a.pid);
    // null: this system cannot tell, and the listener check of each request still applies.
    if (args === undefined || (args !== null && !isLocalSyncthingOf(stateDir)(args))) return undefined;
    return a;
  } catch {
    return undefined;
  }
}

/** An open file of a process, as /proc shows it: its path under /proc/PID/fd and what that links to. */
interface HeldFile {
  readonly fd: string;
  readonly link: string;
}

/**
 * The file through which `pid` holds the socket listening on 127.0.0.1:port; false when it does
 * not hold it; undefined where the system has no /proc to tell.
 */
export function findListener(pid: number, port: number, proc = '/proc'): HeldFile | false | undefined {
  let table: string;
  try {
    table = readFileSync(join(proc, 'net', 'tcp'), 'utf8');
  } catch {
    return undefined;
  }
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  // 127.0.0.1 as the kernel prints it: in host byte order (little-endian: 0100007F).
  const loopback = new Set([`0100007F:${hexPort}`, `7F000001:${hexPort}`]);
  const sockets = new Set<string>();
  for (const line of table.split('\n').slice(1)) {
    // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
    const cols = line.trim().split(/\s+/);
    if (cols.length > 9 && loopback.has(cols[1]!) && cols[3] === '0A' && cols[9] !== '0') sockets.add(`socket:[${cols[9]}]`);
  }
  if (sockets.size === 0) return false;
  const fdDir = join(proc, String(pid), 'fd');
  let fds: string[];
  try {
    fds = readdirSync(fdDir);
  } catch {
    return false;
  }
  for (const fd of fds) {
    try {
      const link = readlinkSync(join(fdDir, fd));
      if (sockets.has(link)) return { fd: join(fdDir, fd), link };
    } catch {
      // closed meanwhile
    }
  }
  return false;
}

/**
 * Whether `pid` holds the socket listening on 127.0.0.1:port (undefined without /proc). The full
 * look (findListener: the kernel's socket table, then every file of the process, 1.4 ms with 170
 * sockets) is made once per address; after that one readlink says the same thing: while that file
 * of the process is still the same listening socket, the port is still bound to it and no other
 * program can bind it.
 */
export function listenerCheck(proc = '/proc'): (pid: number, port: number) => boolean | undefined {
  let known: { pid: number; port: number; file: HeldFile } | undefined;
  return (pid, port) => {
    if (known?.pid === pid && known.port === port) {
      try {
        if (readlinkSync(known.file.fd) === known.file.link) return true;
      } catch {
        // closed, or the process is gone
      }
    }
    known = undefined;
    const file = findListener(pid, port, proc);
    if (!file) return file;
    known = { pid, port, file };
    return true;
  };
}

/**
 * The local Syncthing's REST API wherever it listens now. `locate` gives the current address
 * (undefined while Syncthing starts or restarts); every request checks the listener first (see
 * the top of this file) and fails, sending nothing, when the port is not our Syncthing's.
 */
export class LocalSyncthingApi extends SyncthingApi {
  constructor(
    private readonly locate: () => LocalAddress | undefined,
    private readonly localApiKey: string,
    private readonly held: (pid: number, port: number) => boolean | undefined = listenerCheck(),
    paths: SyncthingPaths = syncthingPaths(),
  ) {
    super('http://127.0.0.1', localApiKey, paths);
  }

  override get baseUrl(): string {
    const a = this.locate();
    return a ? `http://127.0.0.1:${a.port}` : 'the local sync service (not listening: starting or restarting)';
  }

  override async request<T>(method: string, path: string, body?: unknown, timeoutMs?: number): Promise<T> {
    const a = this.locate();
    if (!a) throw new Error('the local sync service is not listening (starting or restarting)');
    if (this.held(a.pid, a.port) === false) {
      throw new Error(`127.0.0.1:${a.port} is no longer the local sync service's (pid ${a.pid}): nothing sent; it is probably restarting`);
    }
    return new SyncthingApi(`http://127.0.0.1:${a.port}`, this.localApiKey, this.paths).request<T>(method, path, body, timeoutMs);
  }
}
