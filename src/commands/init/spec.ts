import { command, type OptionSpec } from '../../cli/spec.ts';
import { context, manifestFile, namespace } from '../shared.ts';

export const initOptions = [
  manifestFile('Path of the manifest to create'),
  { name: 'replace', type: 'bool', default: 'false', description: 'Replace an existing manifest' },
  namespace(),
  context,
  { name: 'v1', type: 'bool', default: 'false', description: 'Use version 1 of the init flow (also accepted as -v1)' },
] as const satisfies readonly OptionSpec[];

export const initCommand = command({
  name: 'init',
  summary: 'Create a manifest (devtool.yml) with guessed defaults, interactively',
  description:
    'Inspects the folder (Dockerfiles, Compose files, Kubernetes manifests, Helm charts, the language of the code) and writes a manifest covering ' +
    'common items with guessed defaults. Never overwrites a manifest without --replace.',
  options: initOptions,
  acceptsSingleDashV1: true,
  load: async () => (await import('./run.ts')).runInit,
});
