/**
 * The whole merged tree to a ComposeProject, with the checks that span services: dependencies
 * that exist and form no cycle, conditions that can be awaited, endpoints that route to a port a
 * service declares.
 */
import type { Path } from '../../yaml/errors.ts';
import { didYouMean } from '../../base/suggest.ts';
import { DNS_LABEL_MAX, DNS_LABEL_RULE, isDnsLabel, isLabelValue, isQualifiedName } from '../../kube/naming.ts';
import type { ComposeService, Endpoint, EndpointRule } from '../model.ts';
import { get, isObj, show, type NormalizeState, type Obj } from './state.ts';
import { sortedMap } from './environment.ts';
import { normalizeService } from './service.ts';
import { topLevelVolumes } from './volumes.ts';

export interface NormalizedParts {
  name?: string;
  services: ComposeService[];
  volumes: ReturnType<typeof topLevelVolumes>;
  endpoints: Endpoint[];
}

const unsupportedTopLevel: Record<string, 'error' | 'warn'> = {
  include: 'error',
  jobs: 'error',
  networks: 'warn',
  secrets: 'warn',
  configs: 'warn',
  models: 'warn',
};

export function normalizeProject(ctx: NormalizeState, tree: Obj): NormalizedParts {
  for (const [key, level] of Object.entries(unsupportedTopLevel)) {
    if (get(tree, key) === undefined) continue;
    if (level === 'error') ctx.fail([key], `top-level ${key} is not supported by devtool`, 'key');
    else ctx.warn(`top-level ${key} is ignored: Kubernetes objects are not created for it`);
  }
  const volumes = topLevelVolumes(ctx, get(tree, 'volumes'));
  const declared = new Set(volumes.map((v) => v.name));
  const servicesRaw = get(tree, 'services');
  const ignored: string[] = [];
  const declaredServices = isObj(servicesRaw) ? Object.keys(servicesRaw) : [];
  const names = new Set(declaredServices);
  const services = declaredServices.map((name) => {
    const s = normalizeService(ctx, name, (servicesRaw as Obj)[name], declared, ignored);
    // `required: false` lets a dependency be absent (Compose: it may be disabled by a profile).
    const absent = s.dependsOn.filter((d) => !d.required && !names.has(d.service));
    for (const d of absent) ctx.warn(`services.${name}.depends_on.${d.service}: no such service; the optional dependency is ignored`);
    return absent.length > 0 ? { ...s, dependsOn: s.dependsOn.filter((d) => !absent.includes(d)) } : s;
  });
  if (ignored.length > 0) ctx.warn(`fields not used on Kubernetes, ignored: ${ignored.map((f) => `services.${f}`).join(', ')}`);
  const byName = new Map(services.map((s) => [s.name, s]));
  checkDependencies(ctx, services, byName);
  const endpoints = normalizeEndpoints(ctx, get(tree, 'endpoints'), byName);
  const name = get(tree, 'name');
  return { ...(typeof name === 'string' && name !== '' ? { name } : {}), services, volumes, endpoints };
}

function checkDependencies(ctx: NormalizeState, services: readonly ComposeService[], byName: ReadonlyMap<string, ComposeService>): void {
  let ok = true;
  for (const s of services) {
    for (const d of s.dependsOn) {
      const at = ['services', s.name, 'depends_on', d.service];
      const problem = (message: string): void => {
        ctx.problems.push({ pos: d.pos, path: at, message });
        ok = false;
      };
      const target = byName.get(d.service);
      if (d.service === s.name) problem(`service ${show(s.name)} cannot depend on itself`);
      else if (!target) problem(`unknown service ${show(d.service)}${didYouMean(d.service, byName.keys())}`);
      else if (d.condition === 'service_healthy' && !target.healthcheck && target.ports.length === 0) {
        // A healthcheck or port the file gets wrong is reported where it is written, not here.
        if (!hasProblemUnder(ctx, target.name, ['healthcheck', 'ports', 'expose'])) {
          problem(`${show(d.service)} has no healthcheck and no port, so "service_healthy" cannot be checked; add a healthcheck or use service_started`);
        }
      } else if (d.condition === 'service_completed_successfully' && target.workload !== 'one-off') {
        problem(
          `${show(d.service)} runs until removed (restart: ${target.restart}), so it never completes; give it restart: "no" or on-failure, or use ` +
            `service_started`,
        );
      }
    }
  }
  if (ok) {
    const cycle = findCycle(services, byName);
    if (cycle) {
      const first = byName.get(cycle[0]!)!;
      const dep = first.dependsOn.find((d) => d.service === cycle[1])!;
      ctx.problems.push({ pos: dep.pos, path: ['services', first.name, 'depends_on', dep.service], message: `dependency cycle: ${cycle.join(' -> ')}` });
    }
  }
}

/** Whether a problem was already found in one of these fields of the service. */
function hasProblemUnder(ctx: NormalizeState, service: string, fields: readonly string[]): boolean {
  return ctx.problems.some((p) => p.path?.[0] === 'services' && p.path[1] === service && fields.includes(String(p.path[2])));
}

/** A dependency cycle as [a, b, ..., a], or undefined. Services are visited in file order. */
export function findCycle(services: readonly ComposeService[], byName: ReadonlyMap<string, ComposeService>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (name: string): string[] | undefined => {
    if (state.get(name) === 'done') return undefined;
    if (state.get(name) === 'open') return [...stack.slice(stack.indexOf(name)), name];
    state.set(name, 'open');
    stack.push(name);
    for (const d of byName.get(name)?.dependsOn ?? []) {
      if (!byName.has(d.service)) continue;
      const found = visit(d.service);
      if (found) return found;
    }
    stack.pop();
    state.set(name, 'done');
    return undefined;
  };
  for (const s of services) {
    const found = visit(s.name);
    if (found) return found;
  }
  return undefined;
}

/**
 * The three notations: a list of rules (one endpoint named after the environment); {labels,
 * rules} (the same, with labels); a map of name to rules (one endpoint per key). A map whose keys
 * are only "rules" and "labels", with a map of labels, is read as the second notation.
 */
function normalizeEndpoints(ctx: NormalizeState, value: unknown, services: ReadonlyMap<string, ComposeService>): Endpoint[] {
  if (value === undefined || value === null) return [];
  const path = ['endpoints'];
  if (Array.isArray(value)) return [{ labels: new Map(), rules: rules(ctx, value, path, services), pos: ctx.at(path) }];
  if (!isObj(value)) return [];
  const keys = Object.keys(value);
  const isObjectNotation =
    keys.includes('rules') && keys.every((k) => k === 'rules' || k === 'labels') && (get(value, 'labels') === undefined || isObj(get(value, 'labels')));
  if (isObjectNotation) {
    return [
      {
        labels: endpointLabels(ctx, get(value, 'labels'), [...path, 'labels']),
        rules: rules(ctx, get(value, 'rules'), [...path, 'rules'], services),
        pos: ctx.at(path),
      },
    ];
  }
  return keys.map((name) => {
    if (!isDnsLabel(name)) {
      ctx.fail([...path, name], `endpoint name ${show(name)} must be a DNS label: at most ${DNS_LABEL_MAX} ${DNS_LABEL_RULE}`, 'key');
    }
    return { name, labels: new Map(), rules: rules(ctx, value[name], [...path, name], services), pos: ctx.at([...path, name], 'key') };
  });
}

function rules(ctx: NormalizeState, value: unknown, path: Path, services: ReadonlyMap<string, ComposeService>): EndpointRule[] {
  if (!Array.isArray(value)) return [];
  const out: EndpointRule[] = [];
  value.forEach((raw, i) => {
    const at = [...path, i];
    const routePath = ctx.str(get(raw, 'path'), [...at, 'path']);
    const serviceName = ctx.str(get(raw, 'service'), [...at, 'service']);
    const port = ctx.port(get(raw, 'port'), [...at, 'port']);
    if (routePath === undefined || serviceName === undefined || port === undefined) return;
    if (!routePath.startsWith('/')) {
      ctx.fail([...at, 'path'], `must start with "/", not ${show(routePath)}`);
      return;
    }
    const service = services.get(serviceName);
    if (!service) {
      ctx.fail([...at, 'service'], `unknown service ${show(serviceName)}${didYouMean(serviceName, services.keys())}`);
      return;
    }
    const ports = [...new Set(service.ports.filter((p) => p.protocol === 'TCP').map((p) => p.container))];
    if (!ports.includes(port)) {
      const declared = ports.length > 0 ? `its ports are ${ports.join(', ')}` : 'it declares no port';
      ctx.fail([...at, 'port'], `service ${show(serviceName)} has no TCP port ${port} (${declared}); list it under the service's ports or expose`);
      return;
    }
    out.push({ path: routePath, service: serviceName, port, pos: ctx.at(at) });
  });
  return out;
}

/** Endpoint labels become Kubernetes labels on each Ingress, so they must be valid ones. */
function endpointLabels(ctx: NormalizeState, value: unknown, path: Path): Map<string, string> {
  const out = new Map<string, string>();
  if (!isObj(value)) return out;
  for (const key of Object.keys(value)) {
    const v = String(value[key] ?? '');
    if (!isQualifiedName(key)) {
      ctx.fail([...path, key], `${show(key)} is not a valid Kubernetes label name`, 'key');
    } else if (!isLabelValue(v)) {
      ctx.fail(
        [...path, key],
        `${show(v)} is not a valid Kubernetes label value (at most 63 letters, digits, "-", "_" and ".", starting and ending with a letter or digit)`,
      );
    } else {
      out.set(key, v);
    }
  }
  return sortedMap(out);
}
