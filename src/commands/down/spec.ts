import type { CommandSpec } from '../../cli/spec.ts';
import { devContainerOptions } from '../shared.ts';

export const downCommand: CommandSpec = {
  name: 'down',
  summary: 'Deactivate a development container and restore the original deployment',
  description: 'Run from the folder where `up` was run. File synchronization stops and the previous deployment configuration is restored.',
  args: [{ name: 'devName' }],
  options: [
    ...devContainerOptions,
    { name: 'volumes', short: 'v', type: 'bool', default: 'false', description: 'Remove persistent volumes where the local folder is synchronized' },
  ],
  load: async () => (await import('./run.ts')).runDown,
};
