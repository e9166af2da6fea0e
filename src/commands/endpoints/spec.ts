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
  description:
    'Prints the HTTPS URL of every public endpoint of the environment, one per line (--output json: a JSON array; md: a Markdown list). ' +
    'With no endpoint domain configured for the context, says so on stderr and how to set one.',
  options: endpointsOptions,
  load: async () => (await import('./run.ts')).runEndpoints,
});
