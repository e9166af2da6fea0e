import { command } from '../../cli/spec.ts';
import { DEV_NAME, devContainerOptions } from '../shared.ts';

export const restartCommand = command({
  name: 'restart',
  summary: 'Restart the development pods of the manifest services section',
  description: 'Restarts development pods, to reload configuration that cannot be hot-reloaded.',
  args: [{ name: 'devName', description: DEV_NAME }],
  options: devContainerOptions,
  load: async () => (await import('./run.ts')).runRestart,
});
