import type { CommandSpec } from '../../cli/spec.ts';
import { manifestFile, notBuilt } from '../shared.ts';

export const buildCommand: CommandSpec = {
  name: 'build',
  summary: 'Build and push the images of the manifest build section',
  description:
    'Builds and pushes the images in the manifest `build` section, or only the named services. When -f points to a Dockerfile, the manifest is ignored and that Dockerfile is built directly.\nBuilder: the hosted build service for a service context; BuildKit when BUILDKIT_HOST (HOST:PORT) is set or the context has a builder; otherwise the local Docker daemon.',
  args: [{ name: 'service', variadic: true }],
  options: [
    manifestFile('Path to the manifest, or to a Dockerfile to build directly', undefined),
    { name: 'no-cache', type: 'bool', default: 'false', description: 'Do not use cache' },
    { name: 'secret', type: 'list', description: 'Secret files exposed to the build, as id=<ID>,src=<LOCAL_PATH>; repeatable' },
    { name: 'export-cache', type: 'string', description: 'Image tag for exported cache (optional)' },
    { name: 'cache-from', type: 'list', description: 'Cache source images (optional); repeatable' },
  ],
  load: notBuilt('building images'),
};
