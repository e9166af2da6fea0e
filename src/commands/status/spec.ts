import type { CommandSpec } from '../../cli/spec.ts';
import { devContainerOptions } from '../shared.ts';

export const statusCommand: CommandSpec = {
  name: 'status',
  summary: 'Show the file synchronization status of a development container',
  args: [{ name: 'devName' }],
  options: [
    ...devContainerOptions,
    { name: 'info', type: 'bool', default: 'false', description: 'Show synchronization service links for troubleshooting' },
    { name: 'watch', short: 'w', type: 'bool', default: 'false', description: 'Watch for changes' },
  ],
  load: async () => (await import('./run.ts')).runStatus,
};
