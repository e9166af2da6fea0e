import type { CommandSpec } from '../../cli/spec.ts';
import { manifestFileWithoutDefault, timeout, vars, wait } from '../shared.ts';

const requiresService = async () => (await import('../require-service.ts')).serviceCommandHandler('preview environments');

export const previewCommand: CommandSpec = {
  name: 'preview',
  summary: 'Manage preview environments (cluster-only; requires a logged-in user)',
  subcommands: [
    {
      name: 'deploy',
      summary: 'Deploy a preview environment for a branch (only admins can deploy a global one)',
      args: [{ name: 'name' }],
      options: [
        { name: 'branch', type: 'string', defaultText: 'current branch', description: 'Branch to deploy' },
        manifestFileWithoutDefault('Manifest location; when unset, automatic deployment rules apply'),
        { name: 'repository', type: 'string', defaultText: 'repo of current git configuration', description: 'Repository URL' },
        { name: 'scope', type: 'string', default: 'personal', allowed: ['personal', 'global'], description: 'Scope: personal or global' },
        { name: 'sourceUrl', type: 'string', description: 'HTTPS URL of the pull/merge request to deploy' },
        timeout('Wait for completion'),
        vars('Preview variable'),
        wait('Wait until finished'),
      ],
      load: requiresService,
    },
    {
      name: 'destroy',
      summary: 'Destroy a preview environment (only administrators can destroy a global one)',
      args: [{ name: 'name' }],
      load: requiresService,
    },
    {
      name: 'endpoints',
      summary: 'List the endpoints of a preview environment',
      args: [{ name: 'name' }],
      options: [
        { name: 'output', short: 'o', type: 'string', allowed: ['json'], description: 'Output format: json, for parsing endpoints into a pull-request layout' },
      ],
      load: requiresService,
    },
    { name: 'list', summary: 'Show status and scope of your preview environments', load: requiresService },
  ],
};
