import type { CommandSpec } from '../../cli/spec.ts';
import { envName, manifestFile, notBuilt, timeout, vars, wait } from '../shared.ts';

export const deployCommand: CommandSpec = {
  name: 'deploy',
  summary: 'Deploy the application: run the manifest deploy commands, or deploy a Compose file',
  description:
    'Runs the commands of the manifest `deploy` section, from the folder of the manifest. Missing images of the `build` section are built and pushed first; repositories of the `dependencies` section not yet deployed are deployed first.',
  options: [
    { name: 'build', type: 'bool', default: 'false', description: 'Force build of images in build' },
    { name: 'dependencies', type: 'bool', default: 'false', description: 'Force deployment of dependencies' },
    manifestFile('Manifest location'),
    envName(),
    { name: 'namespace', short: 'n', type: 'string', description: 'Overrides the target namespace' },
    timeout('Wait for the deployment to complete'),
    vars('Pipeline variable'),
    wait('Wait until the pipeline finishes'),
  ],
  load: notBuilt('deploying applications'),
};
