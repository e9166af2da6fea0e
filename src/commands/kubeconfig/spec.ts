import type { CommandSpec } from '../../cli/spec.ts';

export const kubeconfigCommand: CommandSpec = {
  name: 'kubeconfig',
  summary: 'Update the kubeconfig file with the credentials of the current context',
  description:
    'Writes or updates the entry of the current context in the kubeconfig file (the first file of KUBECONFIG, or ~/.kube/config), keeping every ' +
    'other entry, and makes it the current-context. Prints a line naming the context and the file.',
  load: async () => (await import('./run.ts')).runKubeconfig,
};
