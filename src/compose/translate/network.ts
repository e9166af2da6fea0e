/**
 * Addresses and routes. Every service with ports gets a ClusterIP Service named like the Compose
 * service, so `db:5432` works from other services as in Compose. `HOST:CONTAINER` ports are made
 * public through an Ingress (unless the port is a database or debugger port of the never-public
 * table, or bound to a loopback address); bare ports stay private. `endpoints` become Ingresses.
 *
 * Hosts: list and object notations `<env>-<namespace>.<domain>`; map notation
 * `<key>-<namespace>.<domain>`. A service's public port, as Okteto names them: `<service>-...`
 * when the service has one public port, `<service>-<hostport>-...` for each when it has several.
 *
 * Each Ingress asks for TLS on its host without naming a Secret: the controller serves it with its
 * own certificate (devtool's front door signs one per host; another controller, its default
 * certificate: a wildcard for the domain, docs/clusters.md). With an ingress class in the options
 * the Ingress names it; without, the cluster's default class takes it.
 */
import type { V1IngressRule } from '@kubernetes/client-node';
import { environmentLabels, serviceLabels, serviceSelector } from '../../kube/labels.ts';
import { DNS_LABEL_MAX } from '../../kube/naming.ts';
import type { IngressObject, ServiceObject } from '../../kube/objects.ts';
import type { SourcePos } from '../../yaml/errors.ts';
import type { ComposeService, PortMapping } from '../model.ts';
import type { TranslateState } from './state.ts';

/** Ports never made public by a `ports` entry: those of well-known databases, caches and brokers. */
export const neverPublicPorts: ReadonlySet<number> = new Set([
  3306, // MySQL
  1521,
  1830, // OracleDB
  5432, // PostgreSQL
  1433,
  1434, // SQL Server
  7210, // MaxDB
  7473, // Neo4j
  8529, // ArangoDB
  7000,
  7001,
  9042, // Cassandra
  8086, // InfluxDB
  9200,
  9300, // Elasticsearch
  5984, // CouchDB
  27017,
  27018,
  27019,
  28017, // MongoDB
  6379, // Redis
  8087,
  8088, // Riak
  28015,
  29015, // RethinkDB
  7574,
  8983, // Solr
  2345, // Go debugger
  5858,
  9229, // Node debugger
  5005, // Java debugger
  1234, // Ruby debugger
  4444,
  5678, // Python debugger
]);

export const endpointDomainMissing =
  'public endpoints need an endpoint domain: set DEVTOOL_ENDPOINT_DOMAIN or `devtool context use <ctx> --endpoint-domain <domain>`';

/** A public URL of the environment, with what serves it. */
export interface PublicEndpoint {
  /** The Ingress name. */
  readonly name: string;
  readonly url: string;
  /** `endpoints` entry, or a service's public port. */
  readonly source: 'endpoints' | 'ports';
  readonly routes: readonly { readonly path: string; readonly service: string; readonly port: number }[];
}

export function portName(p: { container: number; protocol: string }): string {
  return `p-${p.container}-${p.protocol.toLowerCase()}`;
}

/** The distinct (port, protocol) pairs a service listens on, in port order. */
export function containerPorts(service: ComposeService): PortMapping[] {
  const seen = new Set<string>();
  return [...service.ports]
    .sort((a, b) => a.container - b.container || (a.protocol < b.protocol ? -1 : a.protocol > b.protocol ? 1 : 0))
    .filter((p) => {
      const key = portName(p);
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
}

export function clusterService(ctx: TranslateState, service: ComposeService): ServiceObject | undefined {
  const ports = containerPorts(service);
  if (ports.length === 0) return undefined;
  const name = ctx.serviceNames.get(service.name)!;
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, labels: serviceLabels(ctx.options.name, name), ...serviceAnnotations(service) },
    spec: {
      type: 'ClusterIP',
      selector: serviceSelector(ctx.options.name, name),
      ports: ports.map((p) => ({ name: portName(p), port: p.container, targetPort: p.container, protocol: p.protocol })),
    },
  };
}

function isLoopback(ip: string | undefined): boolean {
  return ip !== undefined && (ip === 'localhost' || ip === '::1' || ip.startsWith('127.'));
}

/** The ports of a service that are made public, in port order. */
export function publicPorts(ctx: TranslateState, service: ComposeService): PortMapping[] {
  const out: PortMapping[] = [];
  const seen = new Set<number>();
  for (const p of [...service.ports].sort((a, b) => a.container - b.container || (a.published ?? 0) - (b.published ?? 0))) {
    if (p.published === undefined || isLoopback(p.hostIp) || neverPublicPorts.has(p.container)) continue;
    if (p.protocol !== 'TCP') {
      ctx.warnings.push(
        `services.${service.name}: ${p.published}:${p.container}/${p.protocol.toLowerCase()} stays private: only TCP ports can be public endpoints`,
      );
      continue;
    }
    if (seen.has(p.published)) continue;
    seen.add(p.published);
    out.push(p);
  }
  return out;
}

/** A service's Compose labels, as the annotations of each of its objects. */
export function serviceAnnotations(service: ComposeService): { annotations?: Record<string, string> } {
  return service.labels.size > 0 ? { annotations: Object.fromEntries(service.labels) } : {};
}

interface Route {
  readonly name: string;
  readonly hostLabel: string;
  readonly labels: Record<string, string>;
  /** The Compose labels of the service a public port belongs to. */
  readonly annotations?: Record<string, string>;
  readonly routes: PublicEndpoint['routes'];
  readonly pos: SourcePos;
  readonly source: PublicEndpoint['source'];
}

/** The public routes of the project: `endpoints` first, then public ports; before any domain is known. */
export function publicRoutes(ctx: TranslateState): Route[] {
  const env = ctx.options.name;
  const routes: Route[] = [];
  for (const e of ctx.project.endpoints) {
    const name = e.name ?? env;
    routes.push({
      name,
      hostLabel: `${name}-${ctx.options.namespace}`,
      labels: { ...Object.fromEntries(e.labels), ...environmentLabels(env) },
      routes: e.rules.map((r) => ({ path: r.path, service: r.service, port: r.port })),
      pos: e.pos,
      source: 'endpoints',
    });
  }
  for (const s of ctx.project.services) {
    const ports = publicPorts(ctx, s);
    const k8sName = ctx.serviceNames.get(s.name)!;
    for (const p of ports) {
      const name = ports.length === 1 ? k8sName : `${k8sName}-${p.published}`;
      routes.push({
        name,
        hostLabel: `${name}-${ctx.options.namespace}`,
        labels: serviceLabels(env, k8sName),
        ...serviceAnnotations(s),
        routes: [{ path: '/', service: s.name, port: p.container }],
        pos: p.pos,
        source: 'ports',
      });
    }
  }
  return routes;
}

/** Ingress objects (and the URLs they serve) for the routes; records located problems for bad names. */
export function ingresses(ctx: TranslateState, routes: readonly Route[], domain: string): { objects: IngressObject[]; endpoints: PublicEndpoint[] } {
  const objects: IngressObject[] = [];
  const endpoints: PublicEndpoint[] = [];
  const seen = new Map<string, Route>();
  for (const r of routes) {
    const other = seen.get(r.name);
    if (other) {
      ctx.problems.push({
        pos: r.pos,
        message: `the public endpoint "${r.name}" is defined twice (also at ${other.pos.file}:${other.pos.line}:${other.pos.col}); rename the endpoint`,
      });
      continue;
    }
    seen.set(r.name, r);
    if (r.hostLabel.length > DNS_LABEL_MAX) {
      ctx.problems.push({
        pos: r.pos,
        message: `the endpoint host "${r.hostLabel}" is longer than ${DNS_LABEL_MAX} characters; use a shorter endpoint, environment or namespace name`,
      });
      continue;
    }
    const host = `${r.hostLabel}.${domain}`;
    const byPath = new Map<string, V1IngressRule>();
    const rule: V1IngressRule = { host, http: { paths: [] } };
    for (const route of r.routes) {
      if (byPath.has(route.path)) continue; // the first rule for a path wins, as in the file's order
      byPath.set(route.path, rule);
      rule.http!.paths.push({
        path: route.path,
        pathType: 'Prefix',
        backend: { service: { name: ctx.serviceNames.get(route.service)!, port: { number: route.port } } },
      });
    }
    if (rule.http!.paths.length === 0) continue;
    objects.push({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: r.name, labels: r.labels, ...(r.annotations ? { annotations: r.annotations } : {}) },
      spec: { ...(ctx.options.ingressClass ? { ingressClassName: ctx.options.ingressClass } : {}), tls: [{ hosts: [host] }], rules: [rule] },
    });
    endpoints.push({ name: r.name, url: `https://${host}`, source: r.source, routes: r.routes });
  }
  return { objects, endpoints };
}
