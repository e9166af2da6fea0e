import { command, type OptionSpec } from '../../cli/spec.ts';
import { DEV_NAME, devContainerOptions } from '../shared.ts';

export const statusOptions = [
  ...devContainerOptions,
  { name: 'info', type: 'bool', default: 'false', description: 'Show synchronization service links for troubleshooting' },
  { name: 'watch', short: 'w', type: 'bool', default: 'false', description: 'Watch for changes' },
] as const satisfies readonly OptionSpec[];

export const statusCommand = command({
  name: 'status',
  summary: 'Show the file synchronization status of a development container',
  description:
    'With devName, or in a folder with one development container, its synchronization status. Without devName in a folder with several, ' +
    'one line per development container, named.',
  args: [{ name: 'devName', description: DEV_NAME }],
  options: statusOptions,
  load: async () => (await import('./run.ts')).runStatus,
});
