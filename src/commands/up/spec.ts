import { command, type OptionSpec } from '../../cli/spec.ts';
import { DEV_NAME, devContainerOptions } from '../shared.ts';

export const upOptions = [
  ...devContainerOptions,
  {
    name: 'deploy',
    type: 'bool',
    default: 'false',
    description: 'Force execution of the manifest deploy commands (they also run when the application is not deployed yet)',
  },
  { name: 'reset', type: 'bool', default: 'false', description: 'Reset the file synchronization service' },
  {
    name: 'env',
    short: 'e',
    type: 'list',
    of: 'assignments',
    sensitive: 'assignments',
    description: 'Environment variable set in the dev container (KEY=VALUE); repeatable',
  },
] as const satisfies readonly OptionSpec[];

export const upCommand = command({
  name: 'up',
  summary: 'Activate a development container: file sync and port forwarding',
  description:
    'Swaps the original deployment or statefulset for a development container defined in the manifest `services` section, with two-way file ' +
    'synchronization and port forwarding. Builds images and runs the deploy commands if needed: when the workload to develop does not exist yet, ' +
    'or always with --deploy.\n' +
    'Next to a Compose file (and no devtool.yml), the Compose services that mount a host folder are the development containers: those folders ' +
    'are synchronized and their published ports forwarded.\n' +
    'Without devName, when the folder has several development containers, brings them all up in this process (each line of one starts ' +
    'with [name]; no shell opens: use `devtool exec NAME -- sh`); `down` without devName restores them all.',
  args: [{ name: 'devName', description: DEV_NAME }],
  options: upOptions,
  load: async () => (await import('./run.ts')).runUp,
});
