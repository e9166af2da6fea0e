import { command, type OptionSpec } from '../../cli/spec.ts';

export const kubetokenOptions = [
  { name: 'context', short: 'c', type: 'string', description: 'The devtool service context (its URL) whose Kubernetes token to print' },
] as const satisfies readonly OptionSpec[];

/** The credential plugin of the kubeconfig entries `devtool kubeconfig` writes for service contexts: kubectl runs it. */
export const kubetokenCommand = command({
  name: 'kubetoken',
  summary: 'Print an ExecCredential with a short-lived Kubernetes token of a service context (kubectl credential plugin)',
  hidden: true,
  options: kubetokenOptions,
  load: async () => (await import('./run.ts')).runKubetoken,
});
