import { command, type OptionSpec } from '../../cli/spec.ts';
import { envName, manifestFile, timeout, vars, wait } from '../shared.ts';

export const deployOptions = [
  { name: 'build', type: 'bool', default: 'false', description: 'Force build of images in build' },
  { name: 'dependencies', type: 'bool', default: 'false', description: 'Force deployment of dependencies' },
  manifestFile('Manifest location'),
  envName(),
  { name: 'namespace', short: 'n', type: 'string', description: 'Overrides the target namespace' },
  timeout('Wait for the deployment to complete'),
  vars('Pipeline variable'),
  wait('Wait until the pipeline finishes'),
  { name: 'dry-run', type: 'bool', default: 'false', description: 'Print the Kubernetes objects as YAML without touching the cluster (Compose files)' },
] as const satisfies readonly OptionSpec[];

export const deployCommand = command({
  name: 'deploy',
  summary: 'Deploy the application: run the manifest deploy commands, or deploy a Compose file',
  description:
    'Runs the commands of the manifest `deploy` section, from the folder of the manifest. Missing images of the `build` section are built and ' +
    'pushed first; repositories of the `dependencies` section not yet deployed are deployed first.\n' +
    'With a Compose file (--file compose.yaml, or no devtool.yml in the folder), translates it to Kubernetes objects and applies them, services ' +
    'in depends_on order.',
  options: deployOptions,
  load: async () => (await import('./run.ts')).runDeploy,
});
