import type { CommandSpec } from '../../cli/spec.ts';
import { notBuilt } from '../shared.ts';

export const endpointsCommand: CommandSpec = {
  name: 'endpoints',
  summary: 'List the public endpoints of the development environment',
  options: [{ name: 'output', short: 'o', type: 'string', allowed: ['json', 'md'], description: 'Output format: json or md (default: a plain list)' }],
  load: notBuilt('endpoints'),
};
