import type { CommandSpec } from '../../cli/spec.ts';
import { envName } from '../shared.ts';

export const endpointsCommand: CommandSpec = {
  name: 'endpoints',
  summary: 'List the public endpoints of the development environment',
  options: [
    { name: 'output', short: 'o', type: 'string', allowed: ['json', 'md'], description: 'Output format: json or md (default: a plain list)' },
    envName('repository or folder name'),
    { name: 'namespace', short: 'n', type: 'string', defaultText: 'current context namespace', description: 'Namespace of the environment' },
  ],
  load: async () => (await import('./run.ts')).runEndpoints,
};
