import type { CommandHandler } from '../../cli/spec.ts';
import { devTarget } from '../../dev/target.ts';
import { formatPercent, syncStatus } from '../../sync/status.ts';
import { sleep } from '../../base/wait.ts';
import { devTargetQuery } from '../shared.ts';
import type { statusOptions } from './spec.ts';

export const runStatus: CommandHandler<typeof statusOptions> = async (f, inv) => {
  const t = await devTarget(f, devTargetQuery(inv));
  const first = await syncStatus(t.state, t.devName);
  f.io.stdout.write(`Synchronization status: ${formatPercent(first.percent)}\n`);
  if (inv.opts.info) {
    f.io.stdout.write(
      [
        `Local sync service:  ${first.localUrl}`,
        `Remote sync service: ${first.runtime.remoteUrl} (forwarded by 'devtool up' to the dev container)`,
        `User:                ${first.runtime.user}`,
        `Password:            ${first.keys.local.password}`,
        `Remote password:     ${first.keys.remote.password} (the dev container's sync service)`,
        '',
      ].join('\n'),
    );
  }
  if (!inv.opts.watch) return 0;
  // --watch: a new line whenever the figure changes, until Ctrl-C or the end of `up`.
  let last = formatPercent(first.percent);
  let stop = false;
  const onSignal = () => (stop = true);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    while (!stop) {
      await sleep(1000);
      if (stop) break;
      const now = formatPercent((await syncStatus(t.state, t.devName)).percent);
      if (now !== last) f.io.stdout.write(`Synchronization status: ${now}\n`);
      last = now;
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  return 0;
};
