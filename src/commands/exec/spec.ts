import { command } from '../../cli/spec.ts';
import { DEV_NAME, devContainerOptions } from '../shared.ts';

export const execCommand = command({
  name: 'exec',
  summary: 'Run a command in the development container',
  description:
    "Runs COMMAND in the development container started by `up` from this folder; its exit code is devtool's. Fails when no development container " +
    'is active for the current folder.',
  args: [{ name: 'devName', description: DEV_NAME }],
  options: devContainerOptions,
  passthrough: { name: 'COMMAND', required: true },
  examples: ['devtool exec -- npm test', 'devtool exec api -- bash'],
  load: async () => (await import('./run.ts')).runExec,
});
