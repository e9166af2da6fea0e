import { command } from '../../cli/spec.ts';
import { DEV_NAME, devContainerOptions } from '../shared.ts';

export const doctorCommand = command({
  name: 'doctor',
  summary: 'Write a doctor file (zip) for troubleshooting a development container',
  description:
    'Generates a doctor file from the folder where `up` was run: the tool log (devtool.log), the synchronization service logs of the development ' +
    'container, a summary of the development container manifest and a metadata file with the host OS and architecture. Secrets are redacted. The ' +
    'zip is written to the doctor folder of the devtool home ($DEVTOOL_HOME/doctor, by default ~/.devtool/doctor) as devtool-doctor-<time>.zip, ' +
    'never to the current folder (a synced folder would copy it into the dev container), and its path printed; what could not be collected (no ' +
    'active dev container, an unreachable cluster) is listed instead of failing.',
  args: [{ name: 'devName', description: DEV_NAME }],
  options: devContainerOptions,
  examples: ['devtool doctor', 'devtool doctor api'],
  load: async () => (await import('./run.ts')).runDoctor,
});
