import type { CommandHandler } from '../../cli/spec.ts';

export const runAnalytics: CommandHandler = async (f, inv) => {
  const enable = !inv.bool('disable');
  f.analytics.setEnabled(enable);
  f.io.stdout.write(enable ? 'Analytics collection is enabled\n' : 'Analytics collection is disabled\n');
};
