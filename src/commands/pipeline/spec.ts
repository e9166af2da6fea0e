import { command, type CommandSpec, type OptionSpec } from '../../cli/spec.ts';
import { manifestFileWithoutDefault, serviceContext, timeout, vars, wait } from '../shared.ts';

const name = { name: 'name', type: 'string', defaultText: 'folder name', description: 'Pipeline name' } as const satisfies OptionSpec;
const namespace = {
  name: 'namespace',
  short: 'n',
  type: 'string',
  defaultText: 'current cluster client config namespace',
  description: 'Namespace',
} as const satisfies OptionSpec;

export const pipelineDeployOptions = [
  { name: 'branch', type: 'string', defaultText: "the repository's default branch", description: 'Branch to deploy' },
  serviceContext,
  manifestFileWithoutDefault('Manifest location; when unset, automatic deployment rules apply'),
  name,
  namespace,
  { name: 'repository', type: 'string', defaultText: "the checkout's origin remote", description: 'HTTPS URL of the repository' },
  {
    name: 'reuse-params',
    type: 'bool',
    default: 'false',
    description: "Redeploy with the last deploy's repository, branch, file and variables (those given here win)",
  },
  { name: 'skip-if-exists', type: 'bool', default: 'false', description: 'Skip when the pipeline already exists in the namespace' },
  timeout('Wait for completion (the cluster stops the run after this long)'),
  vars('Pipeline variable'),
  wait('Wait until finished, showing the output as it comes'),
] as const satisfies readonly OptionSpec[];

export const pipelineDestroyOptions = [
  serviceContext,
  name,
  namespace,
  timeout('Wait for destruction (the cluster stops the run after this long)'),
  { name: 'volumes', short: 'v', type: 'bool', default: 'false', description: 'Destroy persistent volumes created by the pipeline' },
  wait('Wait until destroyed, showing the output as it comes'),
] as const satisfies readonly OptionSpec[];

export const pipelineCommand: CommandSpec = {
  name: 'pipeline',
  summary: 'Run deploy or destroy as a job in the cluster (requires a logged-in user)',
  description:
    'Runs `devtool deploy` or `devtool destroy` in a Kubernetes Job of the namespace, on a clone of the repository (HTTPS; a private one ' +
    'with the token stored on the service as the secret GIT_TOKEN_<HOST>, e.g. GIT_TOKEN_GITHUB_COM), with your own credentials and ' +
    'stored secrets. It needs the devtool service: the current service context (`devtool context use <URL>`) or the one `--context <URL>` names.',
  subcommands: [
    command({
      name: 'deploy',
      summary: 'Run a job in the cluster that clones the repository and runs deploy on it',
      description:
        'Starts a run of the pipeline NAME (--name, else the repository or folder name) in the namespace: a Job that clones --repository ' +
        "(default: this checkout's origin) at --branch and runs `devtool deploy` there, with the --var values. Without --wait, returns once the " +
        'run is accepted and says how to follow it; with --wait, shows its output as it comes and ends with its status.',
      options: pipelineDeployOptions,
      load: async () => (await import('./run.ts')).runPipelineDeploy,
    }),
    command({
      name: 'destroy',
      summary: 'Run a job in the cluster that clones the repository and runs destroy',
      description:
        'Starts a run of `devtool destroy` for the pipeline NAME (--name, else the folder name) in the namespace, on the repository, branch and ' +
        'variables of its last deploy. --wait follows it as `pipeline deploy --wait` does.',
      options: pipelineDestroyOptions,
      load: async () => (await import('./run.ts')).runPipelineDestroy,
    }),
  ],
};
