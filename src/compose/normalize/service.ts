/** One service of the merged tree to a ComposeService (references to other services are checked later). */
import { isAbsolute, resolve } from 'node:path';
import type { Path } from '../../yaml/errors.ts';
import type { BuildSpec, ComposeService, DependsCondition, Dependency, Workload } from '../model.ts';
import { get, isObj, show, type NormalizeState, type Obj } from './state.ts';
import { buildArgs, serviceEnvironment } from './environment.ts';
import { annotations, healthcheck, resources, restartPolicy, words } from './fields.ts';
import { normalizePorts } from './ports.ts';
import { serviceVolumes } from './volumes.ts';

/** Fields devtool translates; any other field is reported once as ignored. */
const handled = new Set([
  'build',
  'image',
  'command',
  'entrypoint',
  'working_dir',
  'environment',
  'env_file',
  'ports',
  'expose',
  'volumes',
  'depends_on',
  'healthcheck',
  'restart',
  'deploy',
  'scale',
  'cap_add',
  'cap_drop',
  'stop_grace_period',
  'labels',
  'cpus',
  'mem_limit',
  'mem_reservation',
]);
const handledDeploy = new Set(['resources', 'replicas', 'restart_policy']);

const oneOff = new Set(['no', 'never', 'none', 'on-failure']);

export function normalizeService(ctx: NormalizeState, name: string, raw: unknown, declaredVolumes: ReadonlySet<string>, ignored: string[]): ComposeService {
  const path = ['services', name];
  const s: Obj = isObj(raw) ? raw : {};
  const extendsOther = get(s, 'extends') !== undefined;
  if (extendsOther) {
    ctx.fail([...path, 'extends'], 'extends is not supported: share settings with YAML anchors and merge keys (<<: *common) instead', 'key');
  }
  for (const key of Object.keys(s)) if (!handled.has(key) && !key.startsWith('x-') && key !== 'extends') ignored.push(`${name}.${key}`);
  for (const key of Object.keys(isObj(get(s, 'deploy')) ? (get(s, 'deploy') as Obj) : {})) {
    if (!handledDeploy.has(key) && !key.startsWith('x-')) ignored.push(`${name}.deploy.${key}`);
  }

  const image = get(s, 'image');
  const build = buildSpec(ctx, get(s, 'build'), [...path, 'build']);
  // (With extends, the missing image is most likely in the extended service: that error is enough.)
  if ((typeof image !== 'string' || image.trim() === '') && !build && !extendsOther) {
    if (image === undefined || image === null) ctx.fail(path, '"image" is required unless "build" is set', 'key');
    else ctx.fail([...path, 'image'], 'must name an image (it is required unless "build" is set)');
  }
  const { restart, maxAttempts } = restartPolicy(ctx, s, path);
  const workload: Workload = oneOff.has(restart) ? 'one-off' : 'long-running';
  const entrypoint = words(ctx, get(s, 'entrypoint'), [...path, 'entrypoint']);
  const command = words(ctx, get(s, 'command'), [...path, 'command']);
  const workingDir = get(s, 'working_dir');
  const grace = get(s, 'stop_grace_period');
  const stopGracePeriodSeconds = grace === undefined || grace === null ? undefined : ctx.durationSeconds(grace, [...path, 'stop_grace_period'], true);
  const health = healthcheck(ctx, get(s, 'healthcheck'), [...path, 'healthcheck'], name);
  const labels = annotations(ctx, get(s, 'labels'), [...path, 'labels']);

  return {
    name,
    pos: ctx.at(path, 'key'),
    ...(typeof image === 'string' && image.trim() !== '' ? { image: image.trim() } : {}),
    ...(build ? { build } : {}),
    ...(entrypoint ? { entrypoint } : {}),
    ...(command ? { command } : {}),
    ...(typeof workingDir === 'string' && workingDir !== '' ? { workingDir } : {}),
    environment: serviceEnvironment(ctx, s, path),
    ports: normalizePorts(ctx, s, path),
    volumes: serviceVolumes(ctx, get(s, 'volumes'), [...path, 'volumes'], declaredVolumes),
    dependsOn: dependencies(ctx, get(s, 'depends_on'), [...path, 'depends_on']),
    ...(health ? { healthcheck: health } : {}),
    restart,
    workload,
    ...(maxAttempts !== undefined ? { maxAttempts } : {}),
    replicas: replicas(ctx, s, path),
    capAdd: capabilities(ctx, get(s, 'cap_add'), [...path, 'cap_add']),
    capDrop: capabilities(ctx, get(s, 'cap_drop'), [...path, 'cap_drop']),
    resources: resources(ctx, s, path),
    ...(stopGracePeriodSeconds !== undefined ? { stopGracePeriodSeconds } : {}),
    labels,
  };
}

function buildSpec(ctx: NormalizeState, value: unknown, path: Path): BuildSpec | undefined {
  if (value === undefined || value === null) return undefined;
  const spec: Obj = isObj(value) ? value : { context: value };
  const context = get(spec, 'context');
  const contextText = context === undefined || context === null ? '.' : ctx.str(context, isObj(value) ? [...path, 'context'] : path);
  if (contextText === undefined) return undefined;
  // A remote context (git URL) is kept as written; a local one is made absolute.
  const remote = /^[a-z][a-z0-9+.-]*:\/\//i.test(contextText) || contextText.startsWith('git@');
  const dockerfile = get(spec, 'dockerfile');
  const target = get(spec, 'target');
  const exportCache = get(spec, 'export_cache');
  return {
    pos: ctx.at(path),
    context: remote || isAbsolute(contextText) ? contextText : resolve(ctx.projectDir, contextText),
    dockerfile: typeof dockerfile === 'string' && dockerfile !== '' ? dockerfile : 'Dockerfile',
    ...(typeof target === 'string' && target !== '' ? { target } : {}),
    args: buildArgs(ctx, get(spec, 'args'), [...path, 'args']),
    cacheFrom: ctx.strings(get(spec, 'cache_from'), [...path, 'cache_from']),
    ...(typeof exportCache === 'string' && exportCache !== '' ? { exportCache } : {}),
  };
}

function dependencies(ctx: NormalizeState, value: unknown, path: Path): Dependency[] {
  if (Array.isArray(value)) {
    return value.flatMap((v, i) => {
      const service = ctx.str(v, [...path, i]);
      return service === undefined ? [] : [{ service, condition: 'service_started' as const, required: true, pos: ctx.at([...path, i]) }];
    });
  }
  if (!isObj(value)) return [];
  return Object.keys(value).map((service) => {
    const spec = value[service];
    const condition = get(spec, 'condition');
    const required = get(spec, 'required');
    return {
      service,
      condition: (typeof condition === 'string' ? condition : 'service_started') as DependsCondition,
      required: required === undefined ? true : (ctx.bool(required, [...path, service, 'required']) ?? true),
      pos: ctx.at([...path, service], 'key'),
    };
  });
}

function replicas(ctx: NormalizeState, s: Obj, path: Path): number {
  const scaleRaw = get(s, 'scale');
  const replicasRaw = get(get(s, 'deploy'), 'replicas');
  const scale = scaleRaw === undefined || scaleRaw === null ? undefined : ctx.int(scaleRaw, [...path, 'scale'], 'a whole number', 0, 1000);
  const deployReplicas =
    replicasRaw === undefined || replicasRaw === null ? undefined : ctx.int(replicasRaw, [...path, 'deploy', 'replicas'], 'a whole number', 0, 1000);
  if (scale !== undefined && deployReplicas !== undefined && scale !== deployReplicas) {
    ctx.fail([...path, 'scale'], `scale (${scale}) and deploy.replicas (${deployReplicas}) disagree; set one of them`);
  }
  return scale ?? deployReplicas ?? 1;
}

/** Capability names as Kubernetes writes them: upper case, without the CAP_ prefix. */
function capabilities(ctx: NormalizeState, value: unknown, path: Path): string[] {
  const out: string[] = [];
  ctx.strings(value, path).forEach((c, i) => {
    const name = c.trim().toUpperCase().replace(/^CAP_/, '');
    if (!/^[A-Z_]+$/.test(name)) ctx.fail([...path, i], `invalid capability ${show(c)}: use a name such as NET_ADMIN or ALL`);
    else if (!out.includes(name)) out.push(name);
  });
  return out;
}
