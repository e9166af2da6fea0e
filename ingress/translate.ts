/**
 * Ingress objects -> a Caddy configuration (JSON, loaded through Caddy's admin API). Pure: the
 * controller (controller.ts) hands it what its watches hold and pushes the result.
 *
 * What the front door serves, and why:
 * - Only Ingresses of our class (spec.ingressClassName, or the old annotation), and class-less ones
 *   when our IngressClass is the cluster's default (the apiserver fills the class in on creation,
 *   but objects made before the class existed keep none).
 * - Each rule's host gets a certificate from Caddy's internal PKI, signed by the project's CA (the
 *   root certificate and key are handed to Caddy): only hosts named by rules, so a name that is no
 *   Ingress rule gets no certificate and its TLS handshake fails.
 * - Rules without a host and wildcard hosts are not served: a certificate is issued per named host.
 * - TLS Secrets named by Ingresses are not used: every certificate comes from the project's CA.
 * - Paths follow the Ingress rules: Exact is the path itself, Prefix matches whole path elements
 *   (`/api` serves `/api` and `/api/x`, not `/apix`); the longest path wins.
 * - Backends are the Service's ClusterIP and port: the proxy runs on the node's network, where
 *   kube-proxy routes ClusterIPs and the cluster's DNS names do not resolve.
 * - No connection to a backend is kept for the next request. A Service's route can be here before
 *   kube-proxy has rules for its ClusterIP: a connection opened then is not translated and goes
 *   wherever the node's default route leads (on a network with a transparent proxy, a server
 *   that answers 404). A kept connection would carry every later request there too; seen in CI.
 * - A host belongs to the namespace whose claim on it is strongest (hosts.ts): its own endpoint
 *   names and the hosts the operator allows it. Hosts no namespace may claim are not served, so an
 *   Ingress of another namespace cannot take over someone's endpoint, present or future, and the CA
 *   signs names under the endpoint domain only.
 * - Every host of a namespace that sleeps or wakes goes to the devtool service's waking page instead
 *   of its backends (sleeping.ts); its paths and problems are worked out as usual, so the routes
 *   come back unchanged when it is awake.
 * - With an access log file set, Caddy writes one JSON line per request there (and nowhere else):
 *   the controller reads the hosts from it to record each namespace's last request (activity.ts).
 */
import type { V1Ingress, V1IngressBackend, V1Service } from '@kubernetes/client-node';
import { claimStrength, type HostRules, normalizeHost, refusal } from './hosts.ts';
import { type Rest, type WakingPage, wakingHandlers } from './sleeping.ts';

export interface FrontDoorSettings extends HostRules {
  /** The IngressClass served. */
  className: string;
  /** Serve Ingresses without a class too (our class is the cluster's default). */
  acceptWithoutClass: boolean;
  /** Caddy's admin endpoint, kept in every configuration pushed (else /load would drop it). */
  adminListen: string;
  /** PEM files of the project's CA, root of every certificate the front door issues. */
  caCertFile: string;
  caKeyFile: string;
  /** The front door's own host (the service URL): answers /healthz until an Ingress claims it. */
  frontDoorHost?: string;
  /** Where the hosts of a sleeping or waking namespace go; absent: they answer 503. */
  wakingPage?: WakingPage;
  /** The access log (JSON lines, rolled at 1 MB with one old file kept); absent: none. */
  accessLog?: string;
}

export interface Translation {
  config: CaddyConfig;
  /** Hosts served, sorted. */
  hosts: string[];
  /** Ingresses (`namespace/name`) with at least one path served: their status gets our address. */
  served: string[];
  /** What is not served and why, for the controller's log and the Ingresses' events. */
  problems: NotServed[];
}

export interface NotServed {
  /** `namespace/name` of the Ingress. */
  ingress: string;
  why: string;
}

export type CaddyConfig = Record<string, unknown>;
type Route = Record<string, unknown>;

/** The name of the PKI authority inside Caddy that signs with the project's CA. */
const CA_ID = 'devtool';

export function ingressClassOf(ing: V1Ingress): string | undefined {
  return ing.spec?.ingressClassName ?? ing.metadata?.annotations?.['kubernetes.io/ingress.class'];
}

export function servedByUs(ing: V1Ingress, s: FrontDoorSettings): boolean {
  const cls = ingressClassOf(ing);
  return cls === undefined ? s.acceptWithoutClass : cls === s.className;
}

const key = (ing: V1Ingress) => `${ing.metadata?.namespace ?? ''}/${ing.metadata?.name ?? ''}`;
const created = (ing: V1Ingress) => new Date(ing.metadata?.creationTimestamp ?? 0).getTime();

/** Oldest first, then by namespace/name: the order in which Ingresses claim hosts and paths. */
function byAge(a: V1Ingress, b: V1Ingress): number {
  return created(a) - created(b) || (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);
}

/** Caddy path matchers for an Ingress path: Prefix matches whole path elements. */
export function pathMatchers(path: string | undefined, pathType: string | undefined): string[] {
  const p = path || '/';
  if (pathType === 'Exact') return [p];
  const base = p.replace(/\/+$/, '');
  return base === '' ? ['/*'] : [base, `${base}/*`];
}

/** host:port to dial for a backend, or the reason it cannot be served. */
function upstream(backend: V1IngressBackend, namespace: string, services: Map<string, V1Service>): { dial: string } | { problem: string } {
  const ref = backend.service;
  if (!ref) return { problem: 'only Service backends are served' };
  const svc = services.get(`${namespace}/${ref.name}`);
  if (!svc) return { problem: `Service ${ref.name} does not exist` };
  const ip = svc.spec?.clusterIP;
  if (!ip || ip === 'None') return { problem: `Service ${ref.name} has no cluster IP (headless)` };
  const ports = svc.spec?.ports ?? [];
  const port = ref.port?.name !== undefined ? ports.find((p) => p.name === ref.port?.name) : ports.find((p) => p.port === ref.port?.number);
  if (!port) return { problem: `Service ${ref.name} has no port ${ref.port?.name ?? ref.port?.number}` };
  return { dial: `${ip}:${port.port}` };
}

interface PathRoute {
  host: string;
  namespace: string;
  paths: string[];
  exact: boolean;
  dial: string;
}

/** Longest path first, Exact before Prefix of the same path: Ingress precedence, in Caddy's first-match order. */
function specificity(a: PathRoute, b: PathRoute): number {
  const la = a.paths[0]!.length;
  const lb = b.paths[0]!.length;
  return lb - la || Number(b.exact) - Number(a.exact);
}

const textResponse = (status: number, body: string) => ({
  handler: 'static_response',
  status_code: status,
  body,
  headers: { 'Content-Type': ['text/plain; charset=utf-8'] },
});

/** The namespace each host of our Ingresses belongs to (activity.ts maps an access log line's host with it). */
export function hostNamespaces(ingresses: readonly V1Ingress[], s: FrontDoorSettings): Map<string, string> {
  return hostOwners(ingresses.filter((i) => servedByUs(i, s)).sort(byAge), s);
}

/** The namespace each host belongs to: the strongest claim among the Ingresses naming it, the oldest on a tie. */
function hostOwners(ours: readonly V1Ingress[], s: HostRules): Map<string, string> {
  const best = new Map<string, { namespace: string; strength: number }>();
  for (const ing of ours) {
    const ns = ing.metadata?.namespace ?? 'default';
    for (const rule of ing.spec?.rules ?? []) {
      const host = normalizeHost(rule.host ?? '');
      const strength = host ? claimStrength(host, ns, s) : 0;
      if (strength > (best.get(host)?.strength ?? 0)) best.set(host, { namespace: ns, strength });
    }
  }
  return new Map([...best].map(([host, b]) => [host, b.namespace]));
}

/**
 * The configuration serving `ingresses` (their backends among `services`); the hosts of the
 * namespaces in `resting` go to the waking page.
 */
/** The name of the server's access logger (Caddy names it http.log.access.<name>). */
const ACCESS_LOGGER = 'front-door';

/** Fields of Caddy's access log lines not written (Caddy's `>` walks into an object). */
const DROPPED_FIELDS = ['request>headers', 'request>uri', 'request>remote_ip', 'request>remote_port', 'request>tls', 'resp_headers', 'user_id'];

/**
 * The access log: to `file` only (the default log, Caddy's stderr, keeps its own lines). Caddy rolls
 * it at 1 MB and keeps one old file, uncompressed: what the disk holds stays under 2 MB whatever the
 * traffic, and a reader that was behind finishes the old file before the new one.
 */
function accessLogging(file: string): Record<string, unknown> {
  const logger = `http.log.access.${ACCESS_LOGGER}`;
  return {
    logs: {
      default: { exclude: [logger] },
      access: {
        writer: { output: 'file', filename: file, roll: true, roll_size_mb: 1, roll_keep: 1, roll_gzip: false, roll_local_time: false },
        // The host and time are what activity.ts reads: the rest (headers, paths, addresses) of
        // users' requests is not kept.
        encoder: { format: 'filter', wrap: { format: 'json' }, fields: Object.fromEntries(DROPPED_FIELDS.map((f) => [f, { filter: 'delete' }])) },
        include: [logger],
      },
    },
  };
}

export function translate(
  ingresses: readonly V1Ingress[],
  services: readonly V1Service[],
  s: FrontDoorSettings,
  resting: ReadonlyMap<string, Rest> = new Map(),
): Translation {
  const svcByKey = new Map(services.map((svc) => [`${svc.metadata?.namespace}/${svc.metadata?.name}`, svc]));
  const problems: NotServed[] = [];
  const notServed = (ing: V1Ingress, why: string) => problems.push({ ingress: key(ing), why });
  const byHost = new Map<string, PathRoute[]>();
  const claimed = new Set<string>();
  const served = new Set<string>();
  const ours = ingresses.filter((i) => servedByUs(i, s)).sort(byAge);
  const hostOwner = hostOwners(ours, s);

  for (const ing of ours) {
    const ns = ing.metadata?.namespace ?? 'default';
    if (ing.spec?.defaultBackend) notServed(ing, 'spec.defaultBackend is not served (name a host in a rule)');
    for (const tls of ing.spec?.tls ?? []) {
      if (tls.secretName) notServed(ing, `the TLS Secret ${tls.secretName} is not used (the front door's CA signs its certificates)`);
    }
    for (const rule of ing.spec?.rules ?? []) {
      const host = normalizeHost(rule.host ?? '');
      if (!host) {
        notServed(ing, 'a rule without a host is not served (certificates are issued per host)');
        continue;
      }
      if (host.includes('*')) {
        notServed(ing, `the wildcard host ${host} is not served (certificates are issued per host)`);
        continue;
      }
      if (claimStrength(host, ns, s) === 0) {
        notServed(ing, refusal(host, ns, s));
        continue;
      }
      const owner = hostOwner.get(host);
      if (owner !== ns) {
        notServed(ing, `the host ${host} belongs to namespace ${owner}`);
        continue;
      }
      for (const p of rule.http?.paths ?? []) {
        if (p.path?.includes('*')) {
          // Caddy's path matcher reads * as a wildcard; an Ingress path means it literally.
          notServed(ing, `${host}${p.path}: paths with * are not served`);
          continue;
        }
        const paths = pathMatchers(p.path, p.pathType);
        const id = `${host} ${p.pathType === 'Exact' ? 'exact' : 'prefix'} ${paths[0]}`;
        if (claimed.has(id)) {
          notServed(ing, `${host}${p.path ?? '/'} is served by an older Ingress`);
          continue;
        }
        const up = upstream(p.backend, ns, svcByKey);
        if ('problem' in up) {
          notServed(ing, `${host}${p.path ?? '/'}: ${up.problem}`);
          continue;
        }
        claimed.add(id);
        served.add(key(ing));
        const list = byHost.get(host) ?? [];
        list.push({ host, namespace: ns, paths, exact: p.pathType === 'Exact', dial: up.dial });
        byHost.set(host, list);
      }
    }
  }

  const hosts = [...byHost.keys()].sort();
  const routes: Route[] = hosts.flatMap((host) => {
    const namespace = byHost.get(host)![0]!.namespace;
    if (resting.has(namespace)) return [{ match: [{ host: [host] }], handle: wakingHandlers(namespace, s.wakingPage, services), terminal: true }];
    return byHost
      .get(host)!
      .sort(specificity)
      .map((r) => ({
        match: [{ host: [r.host], path: r.paths }],
        handle: [{ handler: 'reverse_proxy', upstreams: [{ dial: r.dial }], transport: { protocol: 'http', keep_alive: { enabled: false } } }],
        terminal: true,
      }));
  });
  const certHosts = [...hosts];
  const door = s.frontDoorHost?.toLowerCase();
  if (door) {
    // After the Ingress routes: the service's own Ingress for this host, once installed, wins.
    routes.push(
      { match: [{ host: [door], path: ['/healthz'] }], handle: [textResponse(200, 'ok\n')], terminal: true },
      { match: [{ host: [door] }], handle: [textResponse(503, 'the devtool service is not installed on this cluster yet\n')], terminal: true },
    );
    if (!certHosts.includes(door)) certHosts.push(door);
    certHosts.sort();
  }
  routes.push({ handle: [textResponse(404, 'no endpoint at this address\n')] });

  const server: Record<string, unknown> = { listen: [':443'], routes };
  if (s.accessLog) server.logs = { default_logger_name: ACCESS_LOGGER };
  const config: CaddyConfig = {
    admin: { listen: s.adminListen },
    ...(s.accessLog ? { logging: accessLogging(s.accessLog) } : {}),
    apps: {
      http: { servers: { 'front-door': server } },
      tls: { automation: { policies: [{ subjects: certHosts, issuers: [{ module: 'internal', ca: CA_ID }] }] } },
      pki: {
        certificate_authorities: {
          [CA_ID]: {
            name: 'devtool front door',
            install_trust: false,
            root: { certificate: s.caCertFile, private_key: s.caKeyFile, format: 'pem_file' },
            // The root signs the certificates itself. With an intermediate of Caddy's own, the chain
            // a client sees ends at that intermediate, so the fingerprint devtool shows for an
            // untrusted service (src/service/tls.ts) was not the one of ca.crt the user compares.
            intermediate: { certificate: s.caCertFile, private_key: s.caKeyFile, format: 'pem_file' },
          },
        },
      },
    },
  };
  return { config, hosts: certHosts, served: [...served].sort(), problems };
}
