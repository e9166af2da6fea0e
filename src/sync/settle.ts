/**
 * Settling a bootstrapped first sync (bootstrap.ts) without conflict copies: the container's
 * folder stays receive-only until it has the laptop's index and its puller has nothing left, and
 * every receive-only change that is still exactly what the bootstrap's copy wrote is removed
 * before the folder turns send-receive (docs/sync-new-volume.md).
 *
 * Why they exist (Syncthing v1.30, lib/model): the container scans the copy, often before the
 * laptop's index has arrived, so each copied file starts as its own receive-only change with a
 * version of its own. The puller then takes the laptop's version: by metadata only where the
 * content is equal, but a file the laptop edited after its listing is in conflict (concurrent
 * versions) and the stale copy is renamed to a `.sync-conflict-` copy; a file the laptop deleted
 * after its listing stays the container's own file; a deletion that reaches a stale copy merges
 * versions and leaves the old content with a version above the laptop's (the earlier attempt's
 * stuck settle). Each of these is the laptop's own older content, still with the identity
 * (inode, size, mtime) the bootstrap gave it, which `devtool-agent drop-copied` checks against
 * the manifest `untar` kept. A removed receive-only file is rescanned as deleted with an empty
 * version (Syncthing's `ShouldConflict` case), so the laptop's version is pulled again without a
 * copy, or its entry goes away where the laptop has none. What the app wrote in the container
 * has another identity: it stays, and turns into an ordinary change at the switch.
 */
import { realClock, waitUntil, type WaitClock } from '../base/wait.ts';
import type { ExecCapture } from '../kube/exec.ts';
import type { Logger } from '../log/logger.ts';
import type { SyncTunnel } from './file-sync.ts';

/** A receive-only change of the container's folder (`/rest/db/localchanged`). */
export interface ChangedItem {
  name: string;
  deleted?: boolean;
  size?: number;
  modified?: string;
}

/** One look at both ends. */
export interface SettleProbe {
  /** The laptop sees the container complete and both ends idle and connected. */
  caughtUp: boolean;
  /** The container's folder is idle (not scanning or pulling)... */
  remoteIdle: boolean;
  /** ...and needs nothing of the laptop's index. */
  remoteNeed: number;
  /** Receive-only changes in the container. */
  receiveOnly: number;
  /** The laptop sees the container without some of its versions (completion below 100%). */
  remoteBehind: boolean;
  /** The laptop's folder is idle and connected to the container (its view of the container is current). */
  localReady: boolean;
  /** Each end has received the other's index up to the other's sequence of this look (exchange.ts). */
  exchanged: boolean;
  /** For the error message at the deadline. */
  describe: string;
}

export interface SettleEnds {
  probe(): Promise<SettleProbe>;
  localChanged(): Promise<ChangedItem[]>;
  /** Every path the laptop sees the container lack (`/rest/db/remoteneed`, every page). */
  lacking(): Promise<string[]>;
  /** Removes, of `names`, what is still exactly the bootstrap's copy (the agent); returns those removed. */
  dropCopied(names: string[]): Promise<string[]>;
  /** The container's Syncthing rescans these paths (resolves once indexed). */
  rescan(paths: string[]): Promise<void>;
  /**
   * Both ends rescan what the laptop sees the container lack (`/rest/db/remoteneed`, a first page);
   * says what that was, with the container's entry of the first.
   */
  rescanLacking(): Promise<string>;
  closed(): boolean;
  sleep(ms: number): Promise<void>;
  now(): number;
  /** Where it stands, every REPORT_MS while it waits (the log: a slow settle says why). */
  report?(describe: string): void;
}

const REPORT_MS = 10_000;
/** A container that says it needs nothing while the laptop sees it behind, this long: it rescans what it lacks. */
const STALL_MS = 5_000;

/**
 * Until the container's folder holds the laptop's version of everything and no receive-only change
 * that the bootstrap wrote; returns the paths removed. The caller then turns the folder
 * send-receive. Each offer is an exec into the container.
 */
export async function settleReceiveOnly(e: SettleEnds, deadline: number, label: string): Promise<string[]> {
  const dropped: string[] = [];
  // Each name is offered once: what the bootstrap wrote cannot turn up again under a name it was
  // not (or no longer) at when offered (a conflict copy gets a new name), so a name kept once is
  // the app's. An app appending to a file (its listing changes at every look) then costs no exec
  // per look and cannot keep the settle from ending.
  const offered = new Set<string>();
  let reported = e.now();
  let stalledSince: number | undefined;
  let nudged = -Infinity;
  for (;;) {
    if (e.closed()) throw new Error(`the sync session of ${label} was closed`);
    let p: SettleProbe | undefined;
    let describe: string;
    try {
      p = await e.probe();
      describe = p.describe;
    } catch (err) {
      describe = (err as Error).message;
    }
    if (p) {
      // What the laptop sees the container lack, read at most once per look.
      let lackingNow: string[] | undefined;
      const lacking = async () => (lackingNow ??= await e.lacking());
      let clean = p.receiveOnly === 0;
      /** The receive-only changes left once no copy is among them: the container's own work. */
      let own: Set<string> | undefined;
      // Only once the puller is done: a stale copy it has yet to settle by metadata is no copy
      // to remove (removing it would cost a transfer).
      if (!clean && p.remoteIdle && p.remoteNeed === 0) {
        const changed = await e.localChanged();
        const fresh = changed.filter((i) => !i.deleted && !offered.has(i.name)).map((i) => i.name);
        if (fresh.length > 0) {
          const removed = await e.dropCopied(fresh);
          for (const name of fresh) offered.add(name);
          if (removed.length > 0) {
            dropped.push(...removed);
            await e.rescan(removed);
            continue;
          }
        }
        clean = true;
        own = new Set(changed.map((i) => i.name));
      }
      if (p.caughtUp && clean) return dropped;
      // The container's own changes (an earlier `up` cut off before its settle, the app writing
      // meanwhile) are announced only once the folder turns send-receive, so until then the laptop
      // sees the container lack exactly those paths and never sees it caught up. Settled when
      // nothing else is lacking: the switch turns them into ordinary changes that reach the laptop.
      if (own && p.remoteBehind && p.localReady) {
        const names = await lacking();
        if (names.length > 0 && names.every((name) => own.has(name))) {
          const some = [...own].slice(0, 5).join(', ') + (own.size > 5 ? ', ...' : '');
          e.report?.(`${own.size} receive-only change(s) in the container are its own (${some}); the switch announces them`);
          return dropped;
        }
      }
      // Seen in 2 of 30 rounds: the container idle, needing nothing, no receive-only change, both
      // indexes current, and the laptop's completion figure for it one item short (99.99%) for
      // good, while the laptop lists nothing it lacks (`/rest/db/remoteneed`, which reads the
      // index itself; the figure comes from Syncthing's running need counts, which drifted). After
      // STALL_MS of that, it is settled. Where something is listed, a rescan of it on both ends
      // clears an entry either end flagged for a rescan (Syncthing does that when a requested
      // block no longer matches the file) and lets the container take the laptop's version where
      // its disk already holds it.
      if (clean && p.remoteIdle && p.remoteNeed === 0 && p.remoteBehind) {
        stalledSince ??= e.now();
        if (e.now() - stalledSince >= STALL_MS && p.exchanged && p.localReady && (await lacking()).length === 0) {
          e.report?.(`settled: this machine counts the container one item short (${describe}), yet lists nothing it lacks, and both indexes are current`);
          return dropped;
        }
        if (e.now() - stalledSince >= STALL_MS && e.now() - nudged >= REPORT_MS) {
          nudged = e.now();
          e.report?.(`the container needs nothing, yet lacks (as this machine sees it): ${await e.rescanLacking()}; rescanned on both ends`);
        }
      } else stalledSince = undefined;
    }
    if (e.now() > deadline) throw new Error(`the first sync of ${label} did not finish in time (${describe})`);
    if (e.now() - reported >= REPORT_MS) {
      reported = e.now();
      e.report?.(describe);
    }
    await e.sleep(100);
  }
}

/**
 * `devtool-agent drop-copied` in the container (through the exec, as the bootstrap's untar), in
 * batches; the paths it removed. A failure after some were removed returns those (they must be
 * rescanned), logged.
 */
export async function dropCopied(
  tunnel: Pick<SyncTunnel, 'runWithInput'>,
  o: { agentPath: string; remoteDir: string; names: readonly string[]; log: Pick<Logger, 'info'> },
): Promise<string[]> {
  const { STDIN_HEADROOM } = await import('../kube/exec.ts');
  const removed: string[] = [];
  for (let i = 0; i < o.names.length; i += DROP_BATCH) {
    const input = dropInput(o.names.slice(i, i + DROP_BATCH));
    const done = await tunnel.runWithInput(
      [o.agentPath, 'drop-copied', o.remoteDir],
      async (send) => {
        const message = Buffer.alloc(STDIN_HEADROOM + input.length);
        input.copy(message, STDIN_HEADROOM);
        await send(message);
      },
      60_000,
    );
    if (done.stdout.length > 0) removed.push(...parseDropAnswer(done.stdout.toString('utf8')).removed);
    if (done.code !== 0) {
      const why = execFailure(done);
      o.log.info(`drop-copied in ${o.remoteDir} failed: ${why}`);
      if (removed.length > 0) return removed;
      throw new Error(`cannot remove the stale copies in the container: ${why}`);
    }
  }
  return removed;
}

/**
 * `devtool-agent settled` in the container: the copy is settled, its manifest goes. Until then the
 * agent writes the folder receive-only at every Syncthing start (a restart during the settle would
 * otherwise announce the stale copies). Right after the switch to send-receive: a dev pod
 * replaced meanwhile (no pod to exec into, or the exec cut off) is waited for and asked again,
 * until `deadline`; then it throws (the folder stays receive-only there at the next start, and the
 * next `up` settles it). An agent that ran and refused (an older one, without `settled`, keeps no
 * such rule) is only logged.
 */
export async function forgetCopy(
  tunnel: Pick<SyncTunnel, 'runWithInput'>,
  o: { agentPath: string; remoteDir: string; log: Pick<Logger, 'info'>; deadline: number; closed(): boolean; clock?: WaitClock },
): Promise<void> {
  const clock = o.clock ?? realClock;
  let why = '';
  const failed = () => new Error(`cannot tell the container that the first sync of ${o.remoteDir} settled: ${why}`);
  await waitUntil(
    async () => {
      // A failed exec may reject with something other than an Error (a WebSocket's error event).
      const done: ExecCapture | { failure: unknown } = await tunnel
        .runWithInput([o.agentPath, 'settled', o.remoteDir], async () => undefined, 30_000)
        .catch((failure: unknown) => ({ failure }));
      if ('code' in done && done.code === 0) return true;
      why = 'code' in done ? execFailure(done) : describeFailure(done.failure);
      // -1: the command did not run (the container is not running); any other code, the agent refused.
      if ('code' in done && done.code !== -1) {
        o.log.info(`settled in ${o.remoteDir} failed: ${why}`);
        return true;
      }
      if (o.closed()) throw failed();
      return false;
    },
    { timeoutMs: Math.max(0, o.deadline - clock.now()), intervalMs: FORGET_RETRY_MS, clock, timedOut: failed },
  );
}

const FORGET_RETRY_MS = 500;

/** What a command run through the exec said when it failed: its last line on stderr, else why it did not run. */
function execFailure(done: ExecCapture): string {
  return (done.stderr ?? '').trim().split('\n').pop() || done.message || `exit code ${done.code}`;
}

function describeFailure(failure: unknown): string {
  if (failure instanceof Error) return failure.message;
  const message = (failure as { message?: unknown } | undefined)?.message;
  return typeof message === 'string' && message !== '' ? message : String(failure);
}

/** Names go to `devtool-agent drop-copied` in batches of this many (its answer stays small). */
export const DROP_BATCH = 200;

/** The input of `devtool-agent drop-copied`: NUL-separated names. */
export function dropInput(names: readonly string[]): Buffer {
  return Buffer.from(names.join('\0'), 'utf8');
}

/** The answer of `devtool-agent drop-copied`: its last line, `{"removed":[...],"manifest":bool}`. */
export function parseDropAnswer(stdout: string): { removed: string[]; manifest: boolean } {
  const line = stdout.trim().split('\n').pop() ?? '';
  const r = JSON.parse(line) as { removed?: unknown; manifest?: unknown };
  if (!Array.isArray(r.removed) || !r.removed.every((n) => typeof n === 'string')) throw new Error(`unexpected answer of drop-copied: ${line}`);
  return { removed: r.removed as string[], manifest: r.manifest === true };
}
