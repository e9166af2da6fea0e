import { DevtoolError } from '../../base/errors.ts';
import type { CommandHandler } from '../../cli/spec.ts';
import { allDevTargets, devTarget, type DevTarget } from '../../dev/target.ts';
import { formatPercent, syncStatus, type SyncStatus } from '../../sync/status.ts';
import { sleep } from '../../base/wait.ts';
import { devTargetQuery } from '../shared.ts';
import type { statusOptions } from './spec.ts';

/**
 * `status NAME` (or a folder with one dev container): that one's figure alone.
 * `status` alone with several: one line per dev container, named; those whose `up` is not running
 * say so; it fails only when none is.
 */
export const runStatus: CommandHandler<typeof statusOptions> = async (f, inv) => {
  const q = devTargetQuery(inv);
  const targets = q.devName !== undefined ? [await devTarget(f, q)] : await allDevTargets(f, q);
  const named = targets.length > 1;
  const read = async (t: DevTarget): Promise<SyncStatus | Error> => syncStatus(t.state, t.devName).catch((err: Error) => err);
  const line = (t: DevTarget, s: SyncStatus | Error) => {
    if (!named) return `Synchronization status: ${formatPercent((s as SyncStatus).percent)}`;
    return s instanceof Error ? `${t.devName}: ${s.message}` : `${t.devName}: Synchronization status: ${formatPercent(s.percent)}`;
  };
  const first = await Promise.all(targets.map(read));
  if (!named && first[0] instanceof Error) throw first[0];
  if (first.every((s) => s instanceof Error)) {
    throw new DevtoolError(
      `file sync is not running for any dev container from this folder (${targets.map((t) => t.devName).join(', ')}): start them with 'devtool up'`,
    );
  }
  for (const [i, t] of targets.entries()) {
    const s = first[i]!;
    f.io.stdout.write(`${line(t, s)}\n`);
    if (inv.opts.info && !(s instanceof Error)) f.io.stdout.write(info(s, named ? '  ' : ''));
  }
  if (!inv.opts.watch) return 0;
  // --watch: a new line whenever a figure changes, until Ctrl-C or the end of `up`.
  const last = targets.map((t, i) => line(t, first[i]!));
  let stop = false;
  const onSignal = () => (stop = true);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    while (!stop) {
      await sleep(1000);
      if (stop) break;
      const now = await Promise.all(targets.map(read));
      if (!named && now[0] instanceof Error) throw now[0];
      // Every `up` ended: as with one, --watch ends with it.
      if (now.every((x) => x instanceof Error)) throw new DevtoolError(`file sync is no longer running for any dev container from this folder`);
      for (const [i, t] of targets.entries()) {
        const text = line(t, now[i]!);
        if (text !== last[i]) f.io.stdout.write(`${text}\n`);
        last[i] = text;
      }
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  return 0;
};

function info(s: SyncStatus, indent: string): string {
  return [
    `Local sync service:  ${s.localUrl}`,
    `Remote sync service: ${s.runtime.remoteUrl} (forwarded by 'devtool up' to the dev container)`,
    `User:                ${s.runtime.user}`,
    `Password:            ${s.keys.local.password}`,
    `Remote password:     ${s.keys.remote.password} (the dev container's sync service)`,
  ]
    .map((l) => `${indent}${l}\n`)
    .join('');
}
