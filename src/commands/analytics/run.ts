import type { CommandHandler } from '../../cli/spec.ts';
import type { analyticsOptions } from './spec.ts';

export const runAnalytics: CommandHandler<typeof analyticsOptions> = async (f, inv) => {
  const enable = !inv.opts.disable;
  f.analytics.setEnabled(enable);
  f.io.stdout.write(enable ? 'Analytics collection is enabled\n' : 'Analytics collection is disabled\n');
};
