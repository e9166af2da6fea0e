/**
 * One `up` session's file sync: the local Syncthing, the two REST APIs (the remote one through the
 * tunnel), the first pass that never overwrites or deletes a local file, then two-way sync driven by
 * our watcher.
 *
 * The first pass (first-pass.ts; Okteto's users lost files to theirs): whatever the container did
 * while no session ran, a local file keeps its content and the container's version is kept as a
 * `.sync-conflict-` copy. Only then do the folders turn `sendreceive`.
 *
 * A new, empty volume is filled first by one tar stream (bootstrap.ts); Syncthing settles it in
 * the background (settleBootstrap).
 */
import { join } from 'node:path';
import type ssh2 from 'ssh2';
import type { HostCommand } from '../binaries/host-binary.ts';
import { writeFileAtomic } from '../io/atomic-file.ts';
import type { ExecCapture, StdinWriter } from '../kube/exec.ts';
import type { Logger } from '../log/logger.ts';
import { GUI_USER, localAgentConfig, REMOTE_GUI_PORT, REMOTE_SYNC_PORT, type SyncFolderPair } from './syncthing-config.ts';
import type { SyncKeys } from './keys.ts';
import { LocalSyncthingApi } from './local-address.ts';
import { LocalSyncthing } from './local-syncthing.ts';
import { MAX_SCAN_PATHS, SyncthingApi, type FolderType, type Versioning } from './rest.ts';
import { LocalWatcher, readIgnoreLines } from './watcher.ts';
import { prepareRemoteFolder, type PreparedFolder } from './bootstrap.ts';
import { ContainerGuard } from './container-guard.ts';
import { indexesExchanged, readSettled, receivedFrom, scanAndExchange, scanWait, type SyncEnds } from './exchange.ts';
import { deletedHereSummary, firstPassSummary, fsLookup, indexedCandidates, keepLocal, planFirstPass, type DeletedHere } from './first-pass.ts';
import { keepContainerVersionsAsCopies, readLocalIndex } from './deleted-here.ts';
import { sleep, waitUntil } from '../base/wait.ts';
import { dropCopied, forgetCopy, settleReceiveOnly } from './settle.ts';
import { ACTIVITY_EVENTS, type SyncActivity, SyncActivityView } from './sync-activity.ts';

export interface SyncTunnel {
  /** A local port forwarded (over SSH) to host:port in the dev container; stable across reconnects. */
  openForward(host: string, port: number, o?: { refuseWhileDown?: boolean }): Promise<number>;
  /** The current SSH connection into the dev container (the bootstrap looks at the folder with it). */
  connection(): Promise<ssh2.Client>;
  /** Runs a command in the dev container with `input` as its standard input (the bootstrap's untar). */
  runWithInput(command: string[], input: StdinWriter, timeoutMs: number): Promise<ExecCapture>;
}

export interface FileSyncOptions {
  tunnel: SyncTunnel;
  keys: SyncKeys;
  folders: readonly SyncFolderPair[];
  stateDir: string;
  syncthingBinary: HostCommand;
  agentBinary: HostCommand;
  log: Logger;
  notice(message: string): void;
  /** `up --reset`: both ends forget their sync database first. */
  reset?: boolean;
  /** The agent's path in the dev container (it runs the bootstrap's untar). */
  remoteAgent: string;
  /** What the sync does, each time that changes once the first sync is done (sync-activity.ts). */
  activity?(a: SyncActivity): void;
  /** Each new conflict copy, on either end: its folder and its path in the folder. */
  conflict?(folder: SyncFolderPair, name: string): void;
  /** A folder as the activity's error line names it (default: its local path). */
  label?(folder: SyncFolderPair): string;
}

/** What `status` reads while `up` runs (runtime.json in the environment's state folder). */
export interface SyncRuntime {
  pid: number;
  localUrl: string;
  remoteUrl: string;
  user: string;
  localDevice: string;
  remoteDevice: string;
  folders: SyncFolderPair[];
  /** False while a bootstrapped first sync is still being settled by Syncthing (status stays below 100%). */
  firstSyncDone: boolean;
}

/** How the first sync of a folder goes (bootstrap.ts): `copied` by the bootstrap, then `settle`d by Syncthing. */
export type FirstSync = { folder: SyncFolderPair } & PreparedFolder;

export const RUNTIME_FILE = 'sync-runtime.json';

export class FileSync {
  private local?: LocalSyncthing;
  private watcher?: LocalWatcher;
  private closed = false;
  localApi?: SyncthingApi;
  remoteApi?: SyncthingApi;
  private readonly conflictsSeen = new Set<string>();
  /** Resolves once every folder is two-way (after start() for bootstrapped folders). */
  settled: Promise<void> = Promise.resolve();

  /** The local folders that have turned two-way (firstPass); all start send-only. */
  private readonly twoWay = new Set<string>();
  /** The forward the local Syncthing dials once the tunnel is up (dialPeerNow). */
  private peerAddress?: Promise<string>;
  /** startLocal's work: the forwards and the local Syncthing started, and a promise of it answering. */
  private localStarted?: Promise<{ localReady: Promise<void>; localApi: LocalSyncthingApi; remoteApi: SyncthingApi }>;
  /** Setting the folders up again after a restart of the local Syncthing (restoreFolders). */
  private restoring: Promise<void> = Promise.resolve();

  /** What the container may not plant here (container-guard.ts). */
  private readonly guard: ContainerGuard;
  /** Aborted by close(): ends the waits that would keep the process alive. */
  private readonly closing = new AbortController();
  /** The folders' sync activity, from the local Syncthing's events (followEvents). */
  private readonly activityView: SyncActivityView;

  constructor(private readonly o: FileSyncOptions) {
    this.activityView = new SyncActivityView(
      o.folders.map((f) => ({ id: f.id, label: o.label?.(f) ?? f.local, sendOnly: f.mode === 'send-only' })),
      o.keys.remote.deviceID,
    );
    this.guard = new ContainerGuard({
      stateDir: o.stateDir,
      localEntry: (id, path) => this.localApi!.file(id, path),
      pushIgnores: (f) => this.pushIgnores(f),
      notice: o.notice,
    });
  }

  /**
   * Starts this machine's end: the forwards to the container's sync service and the local
   * Syncthing. It needs neither the dev pod nor the SSH connection (a forward waits for the
   * connection before it dials), so `up` calls this while the dev pod starts, and the second or so
   * the local Syncthing takes to come up is spent meanwhile. Called again, it does nothing.
   */
  startLocal(): void {
    if (this.localStarted) return;
    const { o } = this;
    this.localStarted = (async () => {
      // Until the tunnel is up, the local Syncthing's dials to this port fail at once; start() then
      // points it at a second forward, which it dials at once (peerAddress).
      const peer = await o.tunnel.openForward('127.0.0.1', REMOTE_SYNC_PORT, { refuseWhileDown: true });
      const remoteApiPort = await o.tunnel.openForward('127.0.0.1', REMOTE_GUI_PORT);
      // The local folders start paused (localAgentConfig): their first scan would take the CPU the
      // bootstrap's copy needs.
      const local = new LocalSyncthing({
        stateDir: o.stateDir,
        syncthingBinary: o.syncthingBinary,
        agentBinary: o.agentBinary,
        agentConfig: localAgentConfig(o.keys, o.folders, peer),
        guardedFolders: o.folders.filter((f) => !f.trustContainer).map((f) => f.id),
        log: o.log,
        notice: o.notice,
        restarted: () => {
          this.restoring = this.restoreFolders().catch((err: Error) =>
            o.notice(`the local sync service restarted, and its folders could not be set up again: ${err.message}`),
          );
        },
      });
      this.local = local;
      // Follows the port the local Syncthing binds at each start (local-address.ts).
      const localApi = new LocalSyncthingApi(() => local.address, o.keys.local.apiKey);
      const remoteApi = new SyncthingApi(`http://127.0.0.1:${remoteApiPort}`, o.keys.remote.apiKey);
      this.localApi = localApi;
      this.remoteApi = remoteApi;
      return { localReady: local.start().then(() => localApi.waitReady(30_000, this.closing.signal)), localApi, remoteApi };
    })();
    // Awaited by start(); a failure before then is start()'s to report.
    this.localStarted.then((x) => x.localReady).catch(() => undefined);
  }

  /**
   * Starts both ends and makes the first sync. Resolves once the container has every folder's
   * files: a new (empty) folder is filled by the bootstrap (bootstrap.ts) and Syncthing settles it
   * in the background (`settled`); any other folder gets the whole first pass here.
   */
  async start(timeoutMs = 5 * 60_000): Promise<FirstSync[]> {
    const { o } = this;
    const deadline = Date.now() + timeoutMs;
    const phases = phaseTimer();
    this.startLocal();
    const { localReady, localApi, remoteApi } = await this.localStarted!;
    phases.mark('forwards');
    await remoteApi.waitReady(60_000);
    phases.mark('container sync service ready');
    for (const f of o.folders) await this.pushIgnores(f);
    const results: FirstSync[] = [];
    for (const folder of o.folders) {
      const extraIgnores = this.guard.ignoreLines(folder, []);
      const prepared = await prepareRemoteFolder({
        api: remoteApi,
        tunnel: o.tunnel,
        folder,
        agentPath: o.remoteAgent,
        notice: o.notice,
        log: o.log,
        extraIgnores,
      });
      results.push({ folder, ...prepared });
    }
    phases.mark(results.some((r) => r.copied) ? 'copy' : 'folders prepared');
    await localReady;
    phases.mark('local sync service ready');
    await this.dialPeerNow();
    for (const f of o.folders) await localApi.patchFolder(f.id, this.localFolderState(f));
    if (o.reset) await this.reset();
    this.writeRuntime(false);
    phases.mark('peer dialed, folders resumed');
    // The watcher runs before the first pass: a save made between the first pass's last scan and
    // the switch to two-way (or just after it, while the pulls of what only the container had
    // start) is scanned at once. Started after, such a save waited for Syncthing's own watcher:
    // 10 s (seen: a file the first pass brought here, saved as `up` got ready). Its scans during
    // the first pass only index this machine's own changes, which the first pass keeps anyway.
    this.watcher = new LocalWatcher(o.folders, {
      // Failed, the change waits for Syncthing's own watcher (10 s or more): devtool.log says so.
      scan: (id, subs) =>
        this.scanLocal(id, subs).catch((err: Error) => {
          o.log.debug(`the scan of ${subs.slice(0, 5).join(', ')}${subs.length > 5 ? ', ...' : ''} in folder ${id} failed: ${err.message}`);
          throw err;
        }),
      ignoresChanged: (f) =>
        void this.pushIgnores(f).catch((err: Error) => o.notice(`cannot send the new .stignore of ${f.local} to the dev container: ${err.message}`)),
      warn: o.notice,
    });
    // A new volume's copy returns at once: the walk of a big tree goes on in the background then.
    const watching = this.watcher.start();
    watching.catch(() => undefined); // awaited below, or by `settled`
    if (!results.some((r) => r.copied)) await watching;
    phases.mark('watcher');
    for (const r of results) if (!r.settle) await this.firstPass(r.folder, deadline);
    phases.mark('first pass');
    this.settled = (async () => {
      await watching;
      for (const r of results) if (r.settle) await this.settleBootstrap(r.folder, deadline);
      this.writeRuntime(true);
    })();
    this.settled.catch(() => undefined); // reported by settleBootstrap; `up` reports the outcome too
    if (!results.some((r) => r.copied)) await this.settled;
    void this.followEvents();
    o.log.debug(`first sync phases: ${phases.summary()}`);
    return results;
  }

  /**
   * Points the local Syncthing at the container's through a forward that waits for the SSH
   * connection. A changed address is dialled at once; the address it started with refused dials
   * while the dev pod was starting, and Syncthing retries those only every 5 s or more.
   */
  private async dialPeerNow(): Promise<void> {
    this.peerAddress ??= this.o.tunnel.openForward('127.0.0.1', REMOTE_SYNC_PORT).then((port) => `tcp://127.0.0.1:${port}`);
    await this.localApi!.setDeviceAddresses(this.o.keys.remote.deviceID, [await this.peerAddress]);
  }

  private localFolderState(f: SyncFolderPair): { paused: false; type: FolderType; versioning: Versioning } {
    return { paused: false, type: this.twoWay.has(f.id) ? 'sendreceive' : 'sendonly', versioning: this.guard.trash(f) };
  }

  /** After the local Syncthing restarted (from its configuration: paused, send-only): each folder as it was. */
  private async restoreFolders(): Promise<void> {
    await this.localApi!.waitReady(60_000);
    await this.dialPeerNow();
    for (const f of this.o.folders) await this.localApi!.patchFolder(f.id, this.localFolderState(f));
    this.o.log.info('the local sync service restarted: its folders are set up again');
  }

  private writeRuntime(firstSyncDone: boolean): void {
    const { o } = this;
    const runtime: SyncRuntime = {
      pid: process.pid,
      localUrl: this.localApi!.baseUrl,
      remoteUrl: this.remoteApi!.baseUrl,
      user: GUI_USER,
      localDevice: o.keys.local.deviceID,
      remoteDevice: o.keys.remote.deviceID,
      folders: [...o.folders],
      firstSyncDone,
    };
    writeFileAtomic(join(o.stateDir, RUNTIME_FILE), JSON.stringify(runtime, null, 2), 0o600);
  }

  /**
   * After the bootstrap (or one an earlier `up` did not finish): the container's Syncthing indexes
   * what landed (its first scan after the unpause), takes the laptop's metadata for every equal
   * file, and turns send-receive again, which announces anything the container wrote meanwhile as
   * ordinary changes (no revert: that would delete them). Then the ordinary first pass.
   */
  private async settleBootstrap(f: SyncFolderPair, deadline: number): Promise<void> {
    try {
      await this.localApi!.scan(f.id, [], scanWait(this.ends(), deadline));
      if (f.mode === 'send-only') {
        // Stays receive-only there: settled once the container has this machine's index.
        await indexesExchanged(this.ends(), f.id, deadline);
        this.o.log.info(`first sync of ${f.local} settled: sent only`);
        return;
      }
      await this.waitRemoteSettled(f, deadline);
      // The switch at once: a file the puller replaces meanwhile can still make a conflict copy
      // the last listing did not see. Then the copy is forgotten (later starts are send-receive),
      // and the switch is checked again: a dev pod replaced in between started receive-only.
      await this.switchRemoteToSendReceive(f, deadline);
      await forgetCopy(this.o.tunnel, { agentPath: this.o.remoteAgent, remoteDir: f.remote, log: this.o.log, deadline, closed: () => this.closed });
      await this.switchRemoteToSendReceive(f, deadline);
      this.o.log.debug(`first sync of ${f.local}: the container's folder is send-receive; the first pass follows`);
      await this.firstPass(f, deadline);
      this.o.log.info(`first sync of ${f.local} settled: both ends agree, two-way`);
    } catch (err) {
      // Closed (`up` is ending): the next `up` settles it (prepareRemoteFolder), nothing to say.
      if (!this.closed) this.o.notice(`the first sync of ${f.local} is not settled yet: ${(err as Error).message}`);
      throw err;
    }
  }

  /**
   * The container's folder turned send-receive, and seen so: a dev pod replaced during the settle
   * started its Syncthing receive-only (the copy was not forgotten yet) and answers only once it is
   * up, so the switch is made until the Syncthing that runs says send-receive. Once the copy is
   * forgotten, every later start is send-receive anyway (its configuration says so).
   */
  private async switchRemoteToSendReceive(f: SyncFolderPair, deadline: number): Promise<void> {
    const remote = this.remoteApi!;
    await waitUntil(
      async () => {
        if ((await remote.folderConfig(f.id)).type === 'sendreceive') return true;
        await remote.patchFolder(f.id, { type: 'sendreceive' });
        return false;
      },
      {
        timeoutMs: Math.max(0, deadline - Date.now()),
        intervalMs: 500,
        retry: () => !this.closed,
        timedOut: (err) => new Error(`the container's folder ${f.remote} did not turn send-receive${err ? `: ${(err as Error).message}` : ''}`),
      },
    );
  }

  /** Both ends drop their index database and restart (Syncthing's /rest/system/reset). */
  private async reset(): Promise<void> {
    for (const api of [this.localApi!, this.remoteApi!]) {
      await api.request('POST', '/rest/system/reset').catch(() => undefined);
    }
    await sleep(1000);
    await Promise.all([this.localApi!.waitReady(60_000), this.remoteApi!.waitReady(60_000)]);
    // The reset restarts the local Syncthing from its configuration: its folders are set up again first.
    await this.restoring;
  }

  private async pushIgnores(f: SyncFolderPair): Promise<void> {
    await this.remoteApi!.setIgnores(f.id, this.guard.ignoreLines(f, readIgnoreLines(f.local)));
  }

  /** The ends as the index exchange sees them (exchange.ts). */
  private ends(): SyncEnds {
    return {
      local: this.localApi!,
      remote: this.remoteApi!,
      localDevice: this.o.keys.local.deviceID,
      remoteDevice: this.o.keys.remote.deviceID,
      closed: () => this.closed,
      sleep,
      now: () => Date.now(),
    };
  }

  /**
   * The first pass (first-pass.ts): both ends index what changed while no session ran and swap
   * indexes; every local path the container's version would replace or delete gets a newer
   * version of the same content; then the folder turns two-way.
   */
  private async firstPass(f: SyncFolderPair, deadline: number): Promise<void> {
    // A send-only folder never takes anything from the container: it stays `sendonly` here.
    if (f.mode === 'send-only') return;
    const local = this.localApi!;
    const began = Date.now();
    await scanAndExchange(this.ends(), f.id, deadline, (what) => this.o.log.debug(`first pass of ${f.local}: ${what} after ${Date.now() - began} ms`));
    let reads = 0;
    const need = await readSettled(
      this.ends(),
      f.id,
      () => {
        reads++;
        return local.need(f.id);
      },
      deadline,
    );
    if (reads > 1) this.o.log.debug(`first sync of ${f.local}: the need list changed while read; read ${reads} times`);
    const lookup = fsLookup(f.local);
    // An index without deletions (a first `up`) has nothing to tell: everything absent here arrives.
    const deletions = (await local.status(f.id)).localDeleted ?? 0;
    const index = deletions > 0 ? await readLocalIndex(local, f.id, indexedCandidates(need, lookup)) : undefined;
    const plan = planFirstPass(need, lookup, Date.now(), index);
    if (plan.deletedHere.length > 0) await this.keepDeletions(f, plan.deletedHere, deadline);
    if (plan.keep.length > 0) {
      await keepLocal(f.local, plan.keep, (paths) => local.scan(f.id, paths));
      const list = plan.keep.map((k) => `${k.path} (${k.container} there)`);
      this.o.log.info(`first sync of ${f.local}: kept this machine's version of ${list.length} path(s): ${list.join(', ')}`);
      this.o.notice(firstPassSummary(f.local, plan)!);
    }
    if (plan.arriving.length > 0)
      this.o.log.info(
        `first sync of ${f.local}: ${plan.arriving.length} path(s) only the container has arrive here: ` +
          `${plan.arriving.slice(0, 20).join(', ')}${plan.arriving.length > 20 ? ', ...' : ''}`,
      );
    this.twoWay.add(f.id);
    await local.setFolderType(f.id, 'sendreceive');
  }

  /**
   * Files deleted here that the container changed meanwhile (deleted-here.ts): renamed there to
   * conflict copies, and that known here before the folder turns two-way, which would otherwise
   * pull the container's version back under its name.
   */
  private async keepDeletions(f: SyncFolderPair, items: readonly DeletedHere[], deadline: number): Promise<void> {
    const kept = await keepContainerVersionsAsCopies(items, {
      connection: await this.o.tunnel.connection(),
      remoteDir: f.remote,
      rescan: (paths) => this.remoteApi!.scan(f.id, paths),
      log: this.o.log,
    });
    if (kept.length === 0) return;
    await indexesExchanged(this.ends(), f.id, deadline);
    const list = kept.map((d) => `${d.path} (now ${d.conflictCopy})`);
    this.o.log.info(`first sync of ${f.local}: deleted here, changed in the container, kept as a conflict copy: ${list.join(', ')}`);
    this.o.notice(deletedHereSummary(f.local, kept.length)!);
  }

  /**
   * Until the remote end has everything this end has, both idle, and none of its receive-only
   * changes is the bootstrap's stale copy (settle.ts).
   */
  private async waitRemoteSettled(f: SyncFolderPair, deadline: number): Promise<void> {
    await indexesExchanged(this.ends(), f.id, deadline);
    this.o.log.debug(`first sync of ${f.local}: indexes exchanged`);
    const local = this.localApi!;
    const remote = this.remoteApi!;
    const remoteDevice = this.o.keys.remote.deviceID;
    const dropped = await settleReceiveOnly(
      {
        probe: async () => {
          const [c, ls, rs, connected] = await Promise.all([
            local.completion(f.id, remoteDevice),
            local.status(f.id),
            remote.status(f.id),
            local.connected(remoteDevice),
          ]);
          const idle = c.completion >= 100 && c.needItems === 0 && ls.state === 'idle' && rs.state === 'idle';
          return {
            caughtUp: idle && connected,
            localReady: ls.state === 'idle' && connected,
            exchanged: receivedFrom(ls, remoteDevice) >= rs.sequence && receivedFrom(rs, this.o.keys.local.deviceID) >= ls.sequence,
            remoteIdle: rs.state === 'idle',
            remoteNeed: rs.needTotalItems ?? 0,
            receiveOnly: rs.receiveOnlyTotalItems ?? 0,
            remoteBehind: c.completion < 100 || c.needItems > 0,
            describe:
              `remote ${c.completion.toFixed(2)}%, local ${ls.state}, remote ${rs.state}, ${rs.needTotalItems ?? 0} needed and ` +
              `${rs.receiveOnlyTotalItems ?? 0} receive-only change(s) there, ${rs.pullErrors} pull error(s)`,
          };
        },
        localChanged: () => remote.localChanged(f.id),
        dropCopied: (names) => dropCopied(this.o.tunnel, { agentPath: this.o.remoteAgent, remoteDir: f.remote, names, log: this.o.log }),
        rescan: (paths) => remote.scan(f.id, paths),
        lacking: () => local.remoteNeed(f.id, remoteDevice),
        rescanLacking: async () => {
          const names = await local.remoteNeed(f.id, remoteDevice, { perpage: 20, pages: 1 });
          if (names.length === 0) return 'nothing listed';
          const first = await remote.file(f.id, names[0]!).catch((err: Error) => err.message);
          await Promise.all([local.scan(f.id, names), remote.scan(f.id, names)]);
          return `${names.join(', ')}; the container's entry of the first: ${JSON.stringify(first).slice(0, 600)}`;
        },
        closed: () => this.closed,
        sleep,
        now: () => Date.now(),
        report: (where) => this.o.log.debug(`first sync of ${f.local} still settling: ${where}`),
      },
      deadline,
      f.local,
    );
    if (dropped.length > 0)
      this.o.log.info(
        `first sync of ${f.local}: removed ${dropped.length} stale copied path(s) in the container (this machine changed or deleted them after the copy): ` +
          `${dropped.slice(0, 20).join(', ')}${dropped.length > 20 ? ', ...' : ''}`,
      );
  }

  /** Our watcher's rescans, each path seen by the guard first (ContainerGuard.beforeScan), unless they are many (a whole-folder scan). */
  private async scanLocal(folderId: string, subs: string[]): Promise<void> {
    const f = this.o.folders.find((x) => x.id === folderId);
    if (f && subs.length <= MAX_SCAN_PATHS) for (const sub of subs) await this.guard.beforeScan(f, sub).catch(() => undefined);
    await this.localApi!.scan(folderId, subs);
  }

  /** What the sync does now (sync-activity.ts): watching until the local Syncthing's events say otherwise. */
  activity(): SyncActivity {
    return this.activityView.activity();
  }

  /** Reports conflict copies as they appear, on either end, and follows the sync's activity. */
  private async followEvents(): Promise<void> {
    let since = 0;
    while (!this.closed) {
      try {
        const events = await this.localApi!.events(since, ['LocalIndexUpdated', 'RemoteIndexUpdated', 'ItemFinished', ...ACTIVITY_EVENTS], 30);
        for (const e of events) {
          since = Math.max(since, e.id);
          if (this.activityView.apply(e)) this.o.activity?.(this.activityView.activity());
          const folder = this.o.folders.find((f) => f.id === e.data.folder);
          // A pull that failed here is retried later (a minute or more): devtool.log says why.
          if (e.type === 'ItemFinished' && e.data.error)
            this.o.log.debug(`pulling ${String(e.data.item)} in folder ${String(e.data.folder)} failed: ${String(e.data.error)}`);
          if (e.type === 'ItemFinished' && e.data.action === 'update' && !e.data.error && folder) {
            const item = String(e.data.item);
            try {
              this.guard.pulled(folder, item, String(e.data.type));
            } catch (err) {
              this.o.notice(`cannot check ${item}, which came from the container: ${(err as Error).message}`);
            }
          }
          const names = [e.data.item, ...((e.data.filenames as unknown[]) ?? [])].filter((n): n is string => typeof n === 'string');
          for (const name of names) {
            if (name.includes('.sync-conflict-') && !this.conflictsSeen.has(name)) {
              this.conflictsSeen.add(name);
              this.o.notice(`sync conflict: both sides changed a file; the other version is kept as ${name}`);
              if (folder) this.o.conflict?.(folder, name);
            }
          }
        }
        await this.guard.checkLinks().catch((err: Error) => this.o.notice(`cannot check the links that came from the container: ${err.message}`));
      } catch {
        if (!this.closed) await sleep(2000);
      }
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    // An `up` that failed before its dev pod (no workload to swap, say) exited only once the wait
    // for the local Syncthing timed out, 30 s later.
    this.closing.abort();
    await this.localStarted?.catch(() => undefined); // so that a local Syncthing still starting is stopped too
    await this.watcher?.close();
    await this.local?.stop();
  }
}

/** Durations of the start's phases for the log: where the first sync's seconds go. */
function phaseTimer(): { mark(name: string): void; summary(): string } {
  let last = performance.now();
  const parts: string[] = [];
  return {
    mark(name) {
      const now = performance.now();
      parts.push(`${name} ${((now - last) / 1000).toFixed(2)}s`);
      last = now;
    },
    summary: () => parts.join(', '),
  };
}
