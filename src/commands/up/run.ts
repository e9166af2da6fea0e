import type { CommandHandler } from '../../cli/spec.ts';
import { allDevTargets, devTarget } from '../../dev/target.ts';
import { upOne, upSeveral } from '../../dev/up.ts';
import { devTargetQuery } from '../shared.ts';
import { refuseSleepingNamespace } from '../sleeping-namespace.ts';
import type { upOptions } from './spec.ts';

/** `up NAME` (or a folder with one dev container): that one; `up` alone with several: all of them, in this process (src/dev/up.ts). */
export const runUp: CommandHandler<typeof upOptions> = async (f, inv) => {
  const q = devTargetQuery(inv);
  const targets = q.devName !== undefined ? [await devTarget(f, q)] : await allDevTargets(f, q);
  await refuseSleepingNamespace(f, targets[0]!.context, targets[0]!.namespace);
  const o = { extraEnv: inv.opts.env, reset: inv.opts.reset, deploy: inv.opts.deploy };
  return targets.length === 1 ? upOne(f, targets[0]!, o) : upSeveral(f, targets, o);
};
