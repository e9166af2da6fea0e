import type { CommandHandler } from '../../cli/spec.ts';
import { Progress } from '../../deploy/progress.ts';
import { deactivate, deactivateApi, type DeactivateApi } from '../../dev/deactivate.ts';
import { STOP_GRACE_MS, type DevState } from '../../dev/local-state.ts';
import { allDevTargets, devState, devTarget, type DevTarget } from '../../dev/target.ts';
import type { Factory } from '../../factory.ts';
import type { KubeTarget } from '../../kube/target.ts';
import { devTargetQuery } from '../shared.ts';
import type { downOptions } from './spec.ts';

/** How long the `up` of several gets to close one session (its Syncthing included) and let go of it. */
const LEAVE_GRACE_MS = 15_000;

/** `down NAME` restores that dev container; `down` alone, every one of the folder. */
export const runDown = downHandler(async (f, target) => deactivateApi(await f.kube(target)));

/** The handler, acting on the namespace `clusterOf` gives (the real one above; an in-memory one in its test). */
export function downHandler(clusterOf: (f: Factory, target: KubeTarget) => Promise<DeactivateApi>): CommandHandler<typeof downOptions> {
  return async (f, inv) => {
    const q = devTargetQuery(inv);
    const targets = q.devName !== undefined ? [await devTarget(f, q)] : await allDevTargets(f, q);
    const cluster = await clusterOf(f, targets[0]!);
    const progress = new Progress(f.io.stderr, f.now, f.log);
    for (const t of targets) {
      // One `up` may run several dev containers of this folder: it is asked to let go of this one
      // alone; one that does not answer (an earlier version) is stopped whole, as the warning says.
      const alsoRan = targets.length === 1 ? sharingItsUp(f, t) : [];
      const leftAlone = alsoRan.length > 0 && (await t.state.askHolderToLeave({ graceMs: LEAVE_GRACE_MS }));
      if (leftAlone) progress.step(`'devtool up' let go of ${t.devName}; ${alsoRan.join(', ')} ${alsoRan.length === 1 ? 'goes' : 'go'} on syncing`);
      // The `up` ends before its dev pod goes, so that it ends with its one line, not first with
      // notices of a lost connection.
      const left = await endLocalSession(t.state, progress, inv.opts.volumes);
      const found = await deactivate(cluster, t, {
        volumes: inv.opts.volumes,
        timeoutMs: 2 * 60_000,
        step: (m) => progress.step(m),
        warn: (m) => progress.warn(m),
        // The session of a folder that is gone keeps its state under the same key it had there.
        takeOver: async (folder) => {
          const left = await endLocalSession(devState(f, folder, t.context.name, t.namespace, t.devName), progress, inv.opts.volumes);
          if (left) progress.warn(mayStillRun(left, `of ${folder}`));
        },
      });
      if (found) progress.done(`dev container ${t.devName} deactivated`);
      else progress.done(`no dev container ${t.devName} was active in namespace ${t.namespace}`);
      if (left) progress.warn(mayStillRun(left, `for ${t.devName}`));
      else if (alsoRan.length > 0 && !leftAlone)
        progress.warn(
          `that 'devtool up' also ran ${alsoRan.join(', ')}: ${alsoRan.length === 1 ? 'it stays' : 'they stay'} active, without sync or forwards until ` +
            `${alsoRan.map((n) => `'devtool up ${n}'`).join(' or ')} (or 'devtool up' for all)`,
        );
    }
  };
}

/** The warning for an `up` that may outlive this `down` (`which`: "of FOLDER", "for DEVNAME"). */
function mayStillRun(up: { pid: number; reason: string }, which: string): string {
  return `'devtool up' (pid ${up.pid}) ${which} may still be running: ${up.reason}; end it with Ctrl-C where it runs, then run 'devtool down' again`;
}

/** The other dev containers of the folder whose `up` is the one running this one's (an `up` of several). */
function sharingItsUp(f: Parameters<typeof devState>[0], t: DevTarget): string[] {
  const pid = t.state.holder();
  if (pid === undefined) return [];
  return Object.keys(t.manifest.services).filter(
    (name) => name !== t.devName && devState(f, t.manifest.folder, t.context.name, t.namespace, name).holder() === pid,
  );
}

/**
 * The `up` session of a folder has nothing left to forward to: end it, then forget the keys and,
 * with the volumes, the local sync index (kept with the volume: the next `up` tells a file deleted
 * here from one only the container has). Returns the `up` that may still run, and why (its state
 * is kept then).
 */
async function endLocalSession(state: DevState, progress: Progress, volumes: boolean): Promise<{ pid: number; reason: string } | undefined> {
  const up = await state.stopHolder();
  if (up?.outcome === 'still-running') return up;
  if (up?.outcome === 'stopped')
    progress.step(`stopped 'devtool up' (pid ${up.pid})${up.killed ? `: it had not ended ${STOP_GRACE_MS / 1000}s after SIGTERM, so it was killed` : ''}`);
  // A local sync service left by an `up` that was killed (SIGKILL) still holds its database.
  const { clearAllButIndex, stopStaleSyncthing } = await import('../../sync/local-syncthing.ts');
  await stopStaleSyncthing(state.dir);
  if (volumes) state.clear();
  else clearAllButIndex(state.dir);
  return undefined;
}
