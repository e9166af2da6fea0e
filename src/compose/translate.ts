/**
 * Compose project to Kubernetes objects: a pure function (no I/O, no clock, no randomness), so
 * the same project and options always give the same objects in the same order. Golden fixtures
 * in testdata/ are its specification.
 *
 * Per service: a workload (Deployment, StatefulSet or Job), a ClusterIP Service when it has ports,
 * an Ingress per public port. Per project: a PersistentVolumeClaim per named volume, an Ingress
 * per endpoint. Every object carries the environment labels; a service's objects and pods also
 * carry the service label, which their selectors use.
 */
import { DevtoolError } from '../base/errors.ts';
import { MinHeap } from '../base/min-heap.ts';
import { DNS_LABEL_MAX, DNS_LABEL_RULE, isDnsLabel, toDnsLabel } from '../kube/naming.ts';
import { sortObjects, type KubeObject } from '../kube/objects.ts';
import { LocatedError, type Problem } from '../yaml/errors.ts';
import type { ComposeProject, ComposeService, DependsCondition } from './model.ts';
import type { TranslateState, TranslateOptions } from './translate/state.ts';
import { clusterService, containerPorts, endpointDomainMissing, ingresses, publicRoutes, type PublicEndpoint } from './translate/network.ts';
import { hostFolderWarnings, ownsStorage, persistentVolumeClaims } from './translate/volumes.ts';
import { workload } from './translate/workloads.ts';

export type { TranslateOptions } from './translate/state.ts';
export type { PublicEndpoint } from './translate/network.ts';

/** One service in rollout order, with what `deploy` needs to wait for it and for its dependencies. */
export interface RolloutStep {
  /** The Compose service name. */
  readonly service: string;
  /** Its workload: kind and Kubernetes name (also the Service name when it has ports). */
  readonly kind: 'Deployment' | 'StatefulSet' | 'Job';
  readonly name: string;
  readonly replicas: number;
  /** What to await before this service counts as started (its depends_on entries). */
  readonly dependsOn: readonly { readonly service: string; readonly condition: DependsCondition; readonly required: boolean }[];
  /**
   * How `service_healthy` on this service is awaited (docs/compose.md): its readiness probe when it has a
   * healthcheck, else a TCP connection to one of `tcpPorts`.
   */
  readonly healthyBy: 'probe' | 'tcp';
  readonly tcpPorts: readonly number[];
}

export interface Translation {
  /** In apply order (claims, Services, workloads, Ingresses), then by name. */
  readonly objects: KubeObject[];
  /** Services in dependency order: every service after what it depends on (ties by name). */
  readonly rollout: RolloutStep[];
  /** The public URLs, sorted by name. */
  readonly endpoints: PublicEndpoint[];
  /** The project's warnings and the translation's, each once. */
  readonly warnings: string[];
}

export function translateCompose(project: ComposeProject, options: TranslateOptions): Translation {
  if (!isDnsLabel(options.name)) {
    throw new DevtoolError(`invalid environment name "${options.name}": use at most ${DNS_LABEL_MAX} ${DNS_LABEL_RULE}`);
  }
  if (!isDnsLabel(options.namespace)) throw new DevtoolError(`invalid namespace "${options.namespace}"`);
  const problems: Problem[] = [];
  const warnings: string[] = [...project.warnings];
  const serviceNames = kubernetesNames(
    project.services.map((s) => ({ key: s.name, pos: s.pos })),
    'service',
    problems,
    (from, to) => warnings.push(`service "${from}" is named "${to}" in the cluster: other services reach it as ${to}`),
  );
  const claimNames = kubernetesNames(
    project.volumes.map((v) => ({ key: v.name, name: v.claimName, pos: v.pos })),
    'volume',
    problems,
  );
  if (problems.length > 0) throw new LocatedError(problems);
  const ctx: TranslateState = { project, options, serviceNames, claimNames, warnings, problems };

  const objects: KubeObject[] = [...persistentVolumeClaims(ctx)];
  for (const s of project.services) {
    const svc = clusterService(ctx, s);
    if (svc) objects.push(svc);
    objects.push(workload(ctx, s, imageOf(ctx, s)));
  }
  if (problems.length > 0) throw new LocatedError(problems);

  const routes = publicRoutes(ctx);
  let endpoints: PublicEndpoint[] = [];
  if (routes.length > 0) {
    const domain = options.endpointDomain?.trim().replace(/^\.+|\.+$/g, '');
    if (!domain) throw new LocatedError({ pos: routes[0]!.pos, message: endpointDomainMissing });
    const made = ingresses(ctx, routes, domain);
    objects.push(...made.objects);
    endpoints = made.endpoints.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
  if (problems.length > 0) throw new LocatedError(problems);

  warnings.push(...hostFolderWarnings(ctx));
  return { objects: sortObjects(objects), rollout: rollout(ctx), endpoints, warnings: [...new Set(warnings)] };
}

function imageOf(ctx: TranslateState, s: ComposeService): string {
  const built = ctx.options.images && Object.hasOwn(ctx.options.images, s.name) ? ctx.options.images[s.name] : undefined;
  const image = built ?? s.image;
  if (!image) {
    ctx.problems.push({ pos: s.build?.pos ?? s.pos, message: `service "${s.name}" has a build but no image: build it first, or give it an image` });
    return '';
  }
  return image;
}

/**
 * Kubernetes names for Compose names (DNS labels), reporting two Compose names that end up the
 * same, and names that had to change (other services address a service by its Kubernetes name).
 */
function kubernetesNames(
  items: readonly { key: string; name?: string; pos: Problem['pos'] }[],
  what: string,
  problems: Problem[],
  renamed?: (from: string, to: string) => void,
): Map<string, string> {
  const out = new Map<string, string>();
  const owner = new Map<string, string>();
  for (const item of items) {
    const wanted = item.name ?? item.key;
    const name = toDnsLabel(wanted);
    if (name === '') {
      problems.push({ pos: item.pos, message: `the ${what} name "${wanted}" cannot be made a Kubernetes name: use letters and digits` });
      continue;
    }
    const previous = owner.get(name);
    if (previous !== undefined) {
      problems.push({ pos: item.pos, message: `the ${what}s "${previous}" and "${wanted}" would both be named "${name}" in Kubernetes; rename one` });
      continue;
    }
    owner.set(name, wanted);
    out.set(item.key, name);
    if (name !== wanted) renamed?.(wanted, name);
  }
  return out;
}

/**
 * Kahn's algorithm; among services that are ready to go, the first by name (a binary heap keyed by
 * name, so n services and e dependencies cost O((n + e) log n)). Cycles were rejected at load.
 */
function rollout(ctx: TranslateState): RolloutStep[] {
  const byName = new Map(ctx.project.services.map((s) => [s.name, s]));
  const before = (a: ComposeService, b: ComposeService) => a.name < b.name;
  const waitingFor = new Map<string, number>();
  const dependents = new Map<string, ComposeService[]>();
  for (const s of ctx.project.services) {
    const deps = new Set(s.dependsOn.map((d) => d.service).filter((d) => byName.has(d)));
    waitingFor.set(s.name, deps.size);
    for (const d of deps) {
      const list = dependents.get(d);
      if (list) list.push(s);
      else dependents.set(d, [s]);
    }
  }
  const ready = new MinHeap(before);
  for (const s of ctx.project.services) if (waitingFor.get(s.name) === 0) ready.push(s);
  const order: ComposeService[] = [];
  for (let next = ready.pop(); next; next = ready.pop()) {
    order.push(next);
    for (const d of dependents.get(next.name) ?? []) {
      const left = waitingFor.get(d.name)! - 1;
      waitingFor.set(d.name, left);
      if (left === 0) ready.push(d);
    }
  }
  if (order.length < byName.size) {
    const done = new Set(order);
    const stuck = ctx.project.services.filter((s) => !done.has(s)).map((s) => s.name);
    throw new DevtoolError(`dependency cycle among ${stuck.sort().join(', ')}`);
  }
  return order.map((s) => ({
    service: s.name,
    kind: s.workload === 'one-off' ? 'Job' : ownsStorage(s) ? 'StatefulSet' : 'Deployment',
    name: ctx.serviceNames.get(s.name)!,
    replicas: s.replicas,
    dependsOn: s.dependsOn.map((d) => ({ service: d.service, condition: d.condition, required: d.required })),
    healthyBy: s.healthcheck ? 'probe' : 'tcp',
    tcpPorts: containerPorts(s)
      .filter((p) => p.protocol === 'TCP')
      .map((p) => p.container),
  }));
}
