import type { CommandSpec } from '../../cli/spec.ts';
import { devContainerOptions, notBuilt } from '../shared.ts';

export const doctorCommand: CommandSpec = {
  name: 'doctor',
  summary: 'Write a doctor file (zip) for troubleshooting a development container',
  description:
    'Generates a doctor file from the folder where `up` was run: the tool log (devtool.log), the synchronization service logs of the development container, a summary of the development container manifest and a metadata file with the host OS and architecture. Secrets are redacted.',
  args: [{ name: 'devName' }],
  options: devContainerOptions,
  load: notBuilt('development containers'),
};
