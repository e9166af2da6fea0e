/**
 * Decoders of the manifest's sections (docs/manifest.md; Okteto manifest v2 conventions where it is
 * silent): `name`, `build`, `deploy`, `dependencies`, `destroy`; `services` is in services.ts.
 * Each decoder normalizes shorthands and fills defaults; descriptions become the JSON Schema's.
 */
import { bool, duration, keyValues, list, map, NAME_PATTERN, NAME_RULE, object, record, shapes, str, type Decoder } from './decode.ts';
import {
  DEFAULT_DEPENDENCY_TIMEOUT_MS,
  type BuildImage,
  type Command,
  type ComposeReference,
  type DeploySection,
  type Dependency,
  type Manifest,
} from './model.ts';
import { servicesDecoder } from './services.ts';

const stringOrList = (description: string): Decoder<string[]> => shapes({ string: map(str(), (s) => [s]), list: list(str()) }, description);

const buildImage: Decoder<BuildImage> = map(
  object(
    {
      context: { decoder: str({ description: 'Build context, relative to the manifest folder. Default ".".' }) },
      dockerfile: { decoder: str({ description: 'Dockerfile path, relative to the context. Default "Dockerfile".' }) },
      target: { decoder: str({ description: 'Build stage to stop at (multi-stage Dockerfiles).' }) },
      args: { decoder: keyValues('Build arguments: a map, or a list of KEY=VALUE. $VAR and ${VAR} resolve from the environment.') },
      secrets: {
        decoder: record(str(), {
          description: 'Build secrets: secret id -> local file path (relative to the manifest folder), passed as --secret id=ID,src=PATH.',
        }),
      },
      cache_from: { decoder: stringOrList('Images to use as cache sources.') },
      export_cache: { decoder: stringOrList('Images to export the build cache to.') },
      image: {
        decoder: str({
          description:
            'Image reference to tag and push. Default: chosen by `devtool build` in the context registry; exported to deploy commands as ' +
            'DEVTOOL_BUILD_<NAME>_IMAGE.',
        }),
      },
      depends_on: { decoder: stringOrList('Other images of this section to build first.') },
    },
    { description: 'An image to build.' },
  ),
  (b) => ({
    context: b.context ?? '.',
    dockerfile: b.dockerfile ?? 'Dockerfile',
    ...(b.target !== undefined ? { target: b.target } : {}),
    args: b.args ?? {},
    secrets: b.secrets ?? {},
    cacheFrom: b.cache_from ?? [],
    exportCache: b.export_cache ?? [],
    ...(b.image !== undefined ? { image: b.image } : {}),
    dependsOn: b.depends_on ?? [],
  }),
);

/** Commands are run by a shell with the deploy variables: devtool leaves `$` in them alone. */
const commandText = (description: string) => str({ expand: false, description });

const command: Decoder<Command> = shapes(
  {
    string: map(commandText('A command, run with sh -c from the manifest folder.'), (c) => ({ name: c, command: c })),
    map: map(
      object(
        {
          name: { decoder: str({ description: 'Shown in progress lines and before each line of output. Default: the command.' }) },
          command: {
            decoder: commandText('Run with sh -c from the manifest folder. $VAR is expanded by the shell, with the deploy variables set.'),
            required: true,
          },
        },
        { description: 'A named command.' },
      ),
      (c) => ({ name: c.name ?? c.command!, command: c.command! }),
    ),
  },
  'A command: a string, or {name, command}.',
);

const route = object(
  {
    path: { decoder: str({ description: 'Request path handled by the route.' }), required: true },
    service: { decoder: str({ description: 'Service receiving the request.' }), required: true },
    port: { decoder: { ...intLike(), schema: { type: 'integer', minimum: 1, maximum: 65535, description: 'Port receiving the request.' } }, required: true },
  },
  { description: 'An HTTPS route.' },
);

function intLike(): Decoder<number> {
  return {
    schema: { type: 'integer' },
    expected: 'a port number',
    decode: (v, p, c) =>
      typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 65535 ? v : c.fail(p, `must be a port number (1-65535), not ${JSON.stringify(v)}`),
  };
}

/** The three notations of Compose `endpoints`, kept as written: the Compose loader reads them. */
const endpoints: Decoder<unknown> = (() => {
  const routes = list(route);
  const withRules = object({
    labels: { decoder: record(str({ scalars: true }), { description: 'Labels of the endpoint objects.' }) },
    rules: { decoder: list(route, 'The routes of the endpoint.'), required: true },
  });
  const named = record(routes, { keyPattern: NAME_PATTERN, keyRule: NAME_RULE });
  return {
    schema: {
      description:
        'Public HTTPS routes, as the Compose `endpoints` extension writes them: a list of routes, a map of endpoint name to routes, or {labels, rules}.',
      anyOf: [routes.schema, withRules.schema, named.schema],
    },
    expected: 'a list or a map',
    decode(v, p, c) {
      if (Array.isArray(v)) return routes.decode(v, p, c) && v;
      if (typeof v === 'object' && v !== null && 'rules' in v) return withRules.decode(v, p, c) && v;
      return named.decode(v, p, c) && v;
    },
  };
})();

const composeReference: Decoder<string[]> = shapes(
  {
    string: map(str(), (s) => [s]),
    list: list(str()),
    map: map(object({ file: { decoder: stringOrList('Compose file(s), merged in order.'), required: true } }), (o) => o.file!),
  },
  'Compose file(s) to deploy, relative to the manifest folder: a path, a list of paths (merged in order), or {file}.',
);

const deploy: Decoder<DeploySection> = shapes(
  {
    list: map(list(command, 'Commands run in order; the first failure stops the deploy.'), (commands) => ({ commands })),
    map: map(
      object(
        {
          commands: { decoder: list(command, 'Commands run in order; the first failure stops the deploy.') },
          compose: { decoder: composeReference },
          endpoints: { decoder: endpoints },
        },
        { description: 'Commands and/or Compose files.' },
      ),
      (d, path, c) => {
        if (d.endpoints !== undefined && d.compose === undefined) return c.fail([...path, 'endpoints'], 'endpoints need a compose file in deploy.compose');
        const compose: ComposeReference | undefined = d.compose
          ? { files: d.compose, ...(d.endpoints !== undefined ? { endpoints: d.endpoints } : {}) }
          : undefined;
        return { commands: d.commands ?? [], ...(compose ? { compose } : {}) };
      },
    ),
  },
  'How `devtool deploy` deploys: a list of commands, or {commands, compose, endpoints}. Commands run first, then the Compose files are deployed.',
);

/** The repository's name from its URL or path: the dependency's default name. */
export function repositoryBaseName(url: string): string {
  return (
    url
      .replace(/[/\\]+$/, '')
      .split(/[/:\\]/)
      .pop()!
      .replace(/\.git$/, '') || 'dependency'
  );
}

const dependency: Decoder<Dependency> = map(
  object(
    {
      repository: { decoder: str({ description: 'Git URL or local path of the repository.' }), required: true },
      manifest: { decoder: str({ description: 'Manifest path inside the repository. Default: devtool.yml, else its Compose file.' }) },
      branch: { decoder: str({ description: "Branch to deploy. Default: the repository's default branch." }) },
      variables: { decoder: keyValues('Variables passed to the dependency deploy (as --var).') },
      wait: { decoder: bool('Wait until the dependency is ready before deploying this application. Default false.') },
      timeout: { decoder: duration('How long to wait for the dependency. Default "5m".') },
    },
    { description: 'A repository deployed before this application.' },
  ),
  (d) => ({
    repository: d.repository!,
    ...(d.manifest !== undefined ? { manifest: d.manifest } : {}),
    ...(d.branch !== undefined ? { branch: d.branch } : {}),
    variables: d.variables ?? {},
    wait: d.wait ?? false,
    timeoutMs: d.timeout ?? DEFAULT_DEPENDENCY_TIMEOUT_MS,
  }),
);

const dependencies: Decoder<Record<string, Dependency>> = shapes(
  {
    map: record(dependency, { keyPattern: NAME_PATTERN, keyRule: NAME_RULE }),
    list: map(
      list(str({ description: 'Git URL or local path of a repository.' })),
      (urls): Record<string, Dependency> =>
        Object.fromEntries(urls.map((u) => [repositoryBaseName(u), { repository: u, variables: {}, wait: false, timeoutMs: DEFAULT_DEPENDENCY_TIMEOUT_MS }])),
    ),
  },
  'Repositories deployed before this application when not deployed yet: a map of name -> {repository, ...}, or a list of repository URLs.',
);

export const manifestDecoder = object(
  {
    name: { decoder: str({ description: 'Environment name. Default: the repository name, else the folder name. --name overrides it.' }) },
    build: { decoder: record(buildImage, { description: 'Images to build: image name -> build settings.', keyPattern: NAME_PATTERN, keyRule: NAME_RULE }) },
    deploy: { decoder: deploy },
    dependencies: { decoder: dependencies },
    destroy: {
      decoder: list(
        command,
        'Commands run by `devtool destroy` before the cluster objects are removed, to remove external resources (buckets, DNS records...).',
      ),
    },
    services: { decoder: servicesDecoder },
  },
  { title: 'devtool manifest (devtool.yml)', description: 'Build, deploy and develop an application on Kubernetes with devtool.' },
);

export type DecodedManifest = Omit<Manifest, 'file' | 'folder' | 'text' | 'warnings'>;

export function normalizeManifest(m: NonNullable<ReturnType<typeof manifestDecoder.decode>>): DecodedManifest {
  return {
    ...(m.name !== undefined ? { name: m.name } : {}),
    build: m.build ?? {},
    deploy: m.deploy ?? { commands: [] },
    dependencies: m.dependencies ?? {},
    destroy: m.destroy ?? [],
    services: m.services ?? {},
  };
}
