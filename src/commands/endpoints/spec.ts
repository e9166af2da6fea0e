import { command, type OptionSpec } from '../../cli/spec.ts';
import { context, envName } from '../shared.ts';

export const endpointsOptions = [
  { name: 'output', short: 'o', type: 'string', allowed: ['json', 'md'], description: 'Output format: json or md (default: a plain list)' },
  envName('repository or folder name'),
  { name: 'namespace', short: 'n', type: 'string', defaultText: 'current context namespace', description: 'Namespace of the environment' },
  context,
] as const satisfies readonly OptionSpec[];

export const endpointsCommand = command({
  name: 'endpoints',
  summary: 'List the public endpoints of the development environment',
  options: endpointsOptions,
  load: async () => (await import('./run.ts')).runEndpoints,
});
