import { command, type OptionSpec } from '../../cli/spec.ts';
import { DEV_NAME, devContainerOptions } from '../shared.ts';

export const downOptions = [
  ...devContainerOptions,
  { name: 'volumes', short: 'v', type: 'bool', default: 'false', description: 'Remove persistent volumes where the local folder is synchronized' },
] as const satisfies readonly OptionSpec[];

export const downCommand = command({
  name: 'down',
  summary: 'Deactivate a development container and restore the original deployment',
  description: 'Run from the folder where `up` was run. File synchronization stops and the previous deployment configuration is restored.',
  args: [{ name: 'devName', description: DEV_NAME }],
  options: downOptions,
  load: async () => (await import('./run.ts')).runDown,
});
