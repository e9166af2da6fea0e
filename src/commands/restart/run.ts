import { DevtoolError } from '../../base/errors.ts';
import type { CommandHandler } from '../../cli/spec.ts';
import { Progress } from '../../deploy/progress.ts';
import { isDevContainerActive, restartDevContainer } from '../../dev/restart.ts';
import { allDevTargets, devTarget } from '../../dev/target.ts';
import { devTargetQuery, type devContainerOptions } from '../shared.ts';

/** `restart devName` restarts that dev container; `restart` alone, every one active from this folder. */
export const runRestart: CommandHandler<typeof devContainerOptions> = async (f, inv) => {
  const targets = inv.args[0] !== undefined ? [await devTarget(f, devTargetQuery(inv))] : await allDevTargets(f, devTargetQuery(inv));
  const client = await f.kube(targets[0]!);
  const chosen = [];
  for (const t of targets) if (targets.length === 1 || (await isDevContainerActive(client, t.devName, t.folder))) chosen.push(t);
  if (chosen.length === 0) {
    throw new DevtoolError(`no dev container is active from this folder (${targets.map((t) => t.devName).join(', ')}): run 'devtool up' first`);
  }
  const progress = new Progress(f.io.stderr, f.now, f.log);
  for (const t of chosen) {
    const mirror = await restartDevContainer(client, t.devName, t.folder, { now: f.now, timeoutMs: 5 * 60_000, step: (m) => progress.step(m) });
    progress.done(`${mirror} restarted in namespace ${t.namespace}`);
  }
};
