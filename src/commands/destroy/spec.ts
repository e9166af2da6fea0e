import type { CommandSpec } from '../../cli/spec.ts';
import { envName, timeout, wait } from '../shared.ts';

export const destroyCommand: CommandSpec = {
  name: 'destroy',
  summary: 'Destroy every cluster resource created by deploy',
  description: 'Destroys all cluster resources created by `deploy`. External resources are destroyed through the manifest `destroy` section.',
  options: [
    envName('folder name'),
    { name: 'namespace', short: 'n', type: 'string', description: 'Overrides the namespace' },
    timeout('Wait for destruction'),
    { name: 'volumes', short: 'v', type: 'bool', default: 'false', description: 'Also destroy persistent volumes' },
    wait('Wait until destroyed'),
  ],
  load: async () => (await import('./run.ts')).runDestroy,
};
