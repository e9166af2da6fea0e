import { command, type CommandSpec, type OptionSpec } from '../../cli/spec.ts';
import { manifestFileWithoutDefault, serviceContext, serviceOptions, timeout, vars, wait } from '../shared.ts';

export const previewDeployOptions = [
  { name: 'branch', type: 'string', defaultText: 'current branch', description: 'Branch to deploy' },
  serviceContext,
  manifestFileWithoutDefault('Manifest location; when unset, automatic deployment rules apply'),
  { name: 'repository', type: 'string', defaultText: 'repo of current git configuration', description: 'Repository URL (HTTPS)' },
  { name: 'scope', type: 'string', default: 'personal', allowed: ['personal', 'global'], description: 'Scope: personal or global' },
  { name: 'sourceUrl', type: 'string', description: 'HTTPS URL of the pull/merge request to deploy' },
  timeout('Wait for completion (the cluster stops the run after this long)'),
  vars('Preview variable'),
  wait('Wait until finished, showing the output as it comes'),
] as const satisfies readonly OptionSpec[];

export const previewDestroyOptions = [
  serviceContext,
  timeout('Wait for destruction (the cluster stops the run after this long)'),
  wait('Wait until destroyed, showing the output as it comes'),
] as const satisfies readonly OptionSpec[];

export const previewEndpointsOptions = [
  serviceContext,
  { name: 'output', short: 'o', type: 'string', allowed: ['json'], description: 'Output format: json, for parsing endpoints into a pull-request layout' },
] as const satisfies readonly OptionSpec[];

const NAME_ARG = [{ name: 'name', description: 'The preview environment, also its namespace (default: `<repository>-<branch>` of this checkout)' }];
const load = async () => await import('./run.ts');

export const previewCommand: CommandSpec = {
  name: 'preview',
  summary: 'Manage preview environments (devtool service; requires a logged-in user)',
  description:
    'A preview environment is a namespace of its own where a pipeline deploys a branch of a repository (HTTPS). Personal ones (the default) ' +
    'are reachable by their creator only; global ones by every user, and only admins deploy or destroy them. The name defaults to the ' +
    "repository's name and the branch. It needs the devtool service: the current service context (`devtool context use <URL>`) " +
    'or the one `--context <URL>` names.',
  subcommands: [
    command({
      name: 'deploy',
      summary: 'Deploy a preview environment for a branch (only admins can deploy a global one)',
      description:
        'Creates the preview environment (a namespace of its own) and starts its pipeline: a Job that clones --repository at --branch and runs ' +
        '`devtool deploy` there. Without --wait, returns once the run is accepted; with --wait, shows its output and then the endpoints.',
      args: NAME_ARG,
      options: previewDeployOptions,
      load: async () => (await load()).runPreviewDeploy,
    }),
    command({
      name: 'destroy',
      summary: 'Destroy a preview environment (only administrators can destroy a global one)',
      description: 'Runs `devtool destroy` in the preview environment, then deletes its namespace. --wait follows both to the end.',
      args: NAME_ARG,
      options: previewDestroyOptions,
      load: async () => (await load()).runPreviewDestroy,
    }),
    command({
      name: 'endpoints',
      summary: 'List the endpoints of a preview environment',
      description: 'Prints the HTTPS URL of every public endpoint of the preview environment, one per line, or a JSON array with --output json.',
      args: NAME_ARG,
      options: previewEndpointsOptions,
      load: async () => (await load()).runPreviewEndpoints,
    }),
    command({
      name: 'list',
      summary: 'Show status and scope of your preview environments',
      description: 'Lists the preview environments you can see: table Name, Scope, Status, Branch, Age, Owner; the reason of each failed one follows.',
      options: serviceOptions,
      load: async () => (await load()).runPreviewList,
    }),
    command({
      name: 'sleep',
      summary: 'Scale a preview environment to zero, keeping everything else (only admins for a global one)',
      description: 'Stops the pods of the preview environment (its workloads scaled to zero), keeping its volumes and endpoints; `wake` brings them back.',
      args: NAME_ARG,
      options: serviceOptions,
      load: async () => (await load()).runPreviewSleep,
    }),
    command({
      name: 'wake',
      summary: 'Wake a sleeping preview environment',
      description: 'Gives the workloads of a sleeping preview environment their replicas back.',
      args: NAME_ARG,
      options: serviceOptions,
      load: async () => (await load()).runPreviewWake,
    }),
  ],
};
