import { command, type OptionSpec } from '../../cli/spec.ts';
import { context, manifestFileWithoutDefault } from '../shared.ts';

export const buildOptions = [
  manifestFileWithoutDefault('Path to the manifest, or to a Dockerfile to build directly'),
  { name: 'no-cache', type: 'bool', default: 'false', description: 'Do not use cache' },
  { name: 'secret', type: 'list', sensitive: 'value', description: 'Secret files exposed to the build, as id=<ID>,src=<LOCAL_PATH>; repeatable' },
  { name: 'export-cache', type: 'string', description: 'Image tag for exported cache (optional)' },
  { name: 'cache-from', type: 'list', description: 'Cache source images (optional); repeatable' },
  context,
] as const satisfies readonly OptionSpec[];

export const buildCommand = command({
  name: 'build',
  summary: 'Build and push the images of the manifest build section',
  description:
    'Builds and pushes the images in the manifest `build` section, or only the named ones (with the images they depend on). When -f points to a ' +
    'Dockerfile, the manifest is ignored and that Dockerfile is built directly (context: its folder). Images are tagged with a hash of their ' +
    'content; the pushed references are printed, one per line.\n' +
    'Builder: BuildKit when BUILDKIT_HOST (HOST:PORT) is set; the hosted build service for a service context; BuildKit when the context has a ' +
    'tcp:// builder; otherwise the local Docker daemon (DOCKER_HOST).',
  args: [{ name: 'service', variadic: true, description: 'Images of the `build` section to build (default: every one)' }],
  options: buildOptions,
  load: async () => (await import('./run.ts')).runBuild,
});
