import type { CommandSpec } from '../../cli/spec.ts';
import { manifestFileWithoutDefault, timeout, vars, wait } from '../shared.ts';

const requiresService = async () => (await import('../require-service.ts')).serviceCommandHandler('pipelines');

export const pipelineCommand: CommandSpec = {
  name: 'pipeline',
  summary: 'Run deploy or destroy as a job in the cluster (requires a logged-in user)',
  subcommands: [
    {
      name: 'deploy',
      summary: 'Run a job in the cluster that clones the repository and runs deploy on it',
      options: [
        { name: 'branch', type: 'string', defaultText: 'main branch', description: 'Branch to deploy' },
        manifestFileWithoutDefault('Manifest location; when unset, automatic deployment rules apply'),
        { name: 'name', type: 'string', defaultText: 'folder name', description: 'Pipeline name' },
        { name: 'namespace', short: 'n', type: 'string', defaultText: 'current cluster client config namespace', description: 'Namespace' },
        { name: 'repository', type: 'string', description: 'HTTPS URL of the repository' },
        { name: 'skip-if-exists', type: 'bool', default: 'false', description: 'Skip when the pipeline already exists in the namespace' },
        timeout('Wait for completion'),
        vars('Pipeline variable'),
        wait('Wait until finished'),
      ],
      load: requiresService,
    },
    {
      name: 'destroy',
      summary: 'Run a job in the cluster that clones the repository and runs destroy',
      options: [
        { name: 'name', type: 'string', defaultText: 'folder name', description: 'Pipeline name' },
        { name: 'namespace', short: 'n', type: 'string', defaultText: 'current cluster client config namespace', description: 'Namespace' },
        timeout('Wait for destruction'),
        { name: 'volumes', short: 'v', type: 'bool', default: 'false', description: 'Destroy persistent volumes created by the pipeline' },
        wait('Wait until destroyed'),
      ],
      load: requiresService,
    },
  ],
};
