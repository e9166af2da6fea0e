import { command, type OptionSpec } from '../../cli/spec.ts';
import { MANIFEST_FILE } from '../../app/manifest-file.ts';
import { context, envName, timeout, vars, wait } from '../shared.ts';

export const deployOptions = [
  { name: 'build', type: 'bool', default: 'false', description: 'Force build of images in build' },
  { name: 'dependencies', type: 'bool', default: 'false', description: 'Force deployment of dependencies' },
  {
    // Repeatable, for Compose files merged in order; one value reads as a string option would.
    name: 'file',
    short: 'f',
    type: 'list',
    defaultText: MANIFEST_FILE,
    description:
      'Manifest location, or a Compose file (told by its content: a file holding services, whatever its name); repeat it to merge ' +
      'Compose files in order. With no devtool.yml: compose.yaml, compose.yml, docker-compose.yaml or docker-compose.yml',
  },
  envName(),
  { name: 'namespace', short: 'n', type: 'string', description: 'Overrides the target namespace' },
  context,
  timeout('Wait for the deployment to complete'),
  vars('A variable for the manifest and Compose files, as if set in the environment'),
  wait('Wait until the deployed workloads are ready'),
  {
    name: 'dry-run',
    type: 'bool',
    default: 'false',
    description: 'Print the Kubernetes objects as YAML without touching the cluster (Compose files); works offline with --namespace',
  },
] as const satisfies readonly OptionSpec[];

export const deployCommand = command({
  name: 'deploy',
  summary: 'Deploy the application: run the manifest deploy commands, or deploy a Compose file',
  description:
    'Runs the commands of the manifest `deploy` section, from the folder of the manifest. Missing images of the `build` section are built and ' +
    'pushed first; repositories of the `dependencies` section not yet deployed are deployed first.\n' +
    'With Compose files (--file, repeatable and merged in order; or no devtool.yml in the folder), translates them to Kubernetes objects and ' +
    'applies them, services in depends_on order. --dry-run prints those objects instead, with the warnings of a deploy on stderr; it needs ' +
    'no cluster when --namespace is given.',
  options: deployOptions,
  load: async () => (await import('./run.ts')).runDeploy,
});
