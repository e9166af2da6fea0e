import { command, type OptionSpec } from '../../cli/spec.ts';

export const analyticsOptions = [
  { name: 'disable', type: 'bool', default: 'false', description: 'Disable analytics collection' },
] as const satisfies readonly OptionSpec[];

export const analyticsCommand = command({
  name: 'analytics',
  summary: 'Enable or disable analytics collection',
  description:
    'Analytics collection is enabled by default. `devtool analytics --disable` switches it off for good; `devtool analytics` switches it back on.\n' +
    'DEVTOOL_DISABLE_ANALYTICS=1 disables it for a single run.',
  options: analyticsOptions,
  load: async () => (await import('./run.ts')).runAnalytics,
});
