import { command, type OptionSpec } from '../../cli/spec.ts';
import { context, envName, manifestFileWithoutDefault, timeout, wait } from '../shared.ts';

export const destroyOptions = [
  // So a manifest deployed with --file gets its destroy commands run (docs/decisions/0021-destroy-file-option.md).
  manifestFileWithoutDefault('Manifest location (default: devtool.yml of the current folder)'),
  envName(),
  { name: 'namespace', short: 'n', type: 'string', description: 'Overrides the namespace' },
  context,
  timeout('Wait for destruction'),
  { name: 'volumes', short: 'v', type: 'bool', default: 'false', description: 'Also destroy persistent volumes' },
  wait('Wait until destroyed'),
] as const satisfies readonly OptionSpec[];

export const destroyCommand = command({
  name: 'destroy',
  summary: 'Destroy every cluster resource created by deploy',
  description: 'Destroys all cluster resources created by `deploy`. External resources are destroyed through the manifest `destroy` section.',
  options: destroyOptions,
  load: async () => (await import('./run.ts')).runDestroy,
});
