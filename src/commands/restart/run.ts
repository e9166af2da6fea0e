import { DevtoolError } from '../../base/errors.ts';
import type { CommandHandler } from '../../cli/spec.ts';
import { Progress } from '../../deploy/progress.ts';
import { isDevContainerActive, restartApi, restartDevContainer, type RestartApi } from '../../dev/restart.ts';
import { allDevTargets, devTarget } from '../../dev/target.ts';
import type { Factory } from '../../factory.ts';
import type { KubeTarget } from '../../kube/target.ts';
import { devTargetQuery, type devContainerOptions } from '../shared.ts';

/** `restart devName` restarts that dev container; `restart` alone, every one active from this folder. */
export const runRestart = restartHandler(async (f, target) => restartApi(await f.kube(target)));

/** The handler, acting on the namespace `clusterOf` gives (the real one above; an in-memory one in its test). */
export function restartHandler(clusterOf: (f: Factory, target: KubeTarget) => Promise<RestartApi>): CommandHandler<typeof devContainerOptions> {
  return async (f, inv) => {
    const targets = inv.args[0] !== undefined ? [await devTarget(f, devTargetQuery(inv))] : await allDevTargets(f, devTargetQuery(inv));
    const cluster = await clusterOf(f, targets[0]!);
    const chosen = [];
    for (const t of targets) if (targets.length === 1 || (await isDevContainerActive(cluster, t.devName, t.folder))) chosen.push(t);
    if (chosen.length === 0) {
      throw new DevtoolError(`no dev container is active from this folder (${targets.map((t) => t.devName).join(', ')}): run 'devtool up' first`);
    }
    const progress = new Progress(f.io.stderr, f.now, f.log);
    for (const t of chosen) {
      const mirror = await restartDevContainer(cluster, t.devName, t.folder, { now: f.now, timeoutMs: 5 * 60_000, step: (m) => progress.step(m) });
      progress.done(`${mirror} restarted in namespace ${t.namespace}`);
    }
  };
}
