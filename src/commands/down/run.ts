import type { CommandHandler } from '../../cli/spec.ts';
import { Progress } from '../../deploy/progress.ts';
import { deactivate } from '../../dev/deactivate.ts';
import type { DevState } from '../../dev/local-state.ts';
import { devState, devTarget } from '../../dev/target.ts';

export const runDown: CommandHandler = async (f, inv) => {
  const t = await devTarget(f, inv);
  const { KubeClient } = await import('../../kube/client.ts');
  const client = await KubeClient.create(t.context, f.env, t.namespace);
  const progress = new Progress(f.io.stderr, f.now, f.log);
  const found = await deactivate(client, t, {
    volumes: inv.bool('volumes'),
    timeoutMs: 2 * 60_000,
    step: (m) => progress.step(m),
    warn: (m) => progress.warn(m),
    // The session of a folder that is gone keeps its state under the same key it had there.
    takeOver: async (folder) => {
      const left = await endLocalSession(devState(f, folder, t.context.name, t.namespace, t.devName), progress);
      if (left !== undefined) progress.warn(`'devtool up' (pid ${left}) of ${folder} did not stop: end it with Ctrl-C`);
    },
  });
  const holder = await endLocalSession(t.state, progress);
  if (found) progress.done(`dev container ${t.devName} deactivated`);
  else progress.done(`no dev container ${t.devName} was active in namespace ${t.namespace}`);
  if (holder !== undefined) progress.warn(`'devtool up' (pid ${holder}) is still running for ${t.devName} and did not stop: end it with Ctrl-C`);
};

/**
 * The `up` session of a folder has nothing left to forward to: end it, then forget the keys.
 * Returns the PID of an `up` that would not stop (its state is kept then).
 */
async function endLocalSession(state: DevState, progress: Progress): Promise<number | undefined> {
  const stopped = await state.stopHolder();
  if (stopped !== undefined) progress.step(`stopped 'devtool up' (pid ${stopped})`);
  const holder = state.holder();
  if (holder !== undefined) return holder;
  // A local sync service left by an `up` that was killed (SIGKILL) still holds its database.
  const { stopStaleSyncthing } = await import('../../sync/local-syncthing.ts');
  await stopStaleSyncthing(state.dir);
  state.clear();
  return undefined;
}
