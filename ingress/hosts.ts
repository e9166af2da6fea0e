/**
 * Which namespace a host belongs to. Pure: translate.ts asks it for every rule's host.
 *
 * A namespace's own hosts are its endpoints' names, `<name>-<namespace>.<endpoint domain>` (what
 * `devtool deploy` makes): one label directly under the endpoint domain, ending in `-<namespace>`.
 * Besides those, a namespace may claim only the hosts the operator allows it (the chart's
 * `ingress.allowedHosts`; the service's own host for the release namespace). Every other host is
 * refused, whoever names it first, so nobody can take another namespace's future endpoint or a
 * name outside the endpoint domain (the front door's CA would sign it).
 *
 * The naming scheme itself is ambiguous: `web-b-a` is service `web-b` of namespace `a` and service
 * `web` of namespace `b-a`. The longer namespace wins (the reading with the shorter endpoint name),
 * so the rightful owner's Ingress is served whenever it appears, and an operator's allowance wins
 * over both.
 */

export interface HostRules {
  /** The domain endpoints live under, lower case, without a trailing dot. */
  endpointDomain: string;
  /** Hosts the operator lets a namespace claim besides its own, by namespace. */
  allowedHosts: Readonly<Record<string, readonly string[]>>;
}

/** Outranks any namespace's own form: the operator said so. */
const ALLOWED = Number.MAX_SAFE_INTEGER;

/** True when `host` is the endpoint domain or a name under it. */
export function underDomain(host: string, domain: string): boolean {
  return host === domain || host.endsWith(`.${domain}`);
}

/**
 * How strong `namespace`'s claim on `host` is: 0 for none; between two namespaces naming one host
 * the stronger one owns it. Both names in lower case.
 */
export function claimStrength(host: string, namespace: string, r: HostRules): number {
  if (!underDomain(host, r.endpointDomain)) return 0;
  if (r.allowedHosts[namespace]?.includes(host)) return ALLOWED;
  const label = host.slice(0, -(r.endpointDomain.length + 1));
  const suffix = `-${namespace}`;
  if (label.includes('.') || label.length <= suffix.length || !label.endsWith(suffix)) return 0;
  return namespace.length;
}

/** Why `namespace` may not claim `host` (its claim strength is 0), for the controller's problem lines. */
export function refusal(host: string, namespace: string, r: HostRules): string {
  if (!underDomain(host, r.endpointDomain)) {
    return `the host ${host} is outside the endpoint domain ${r.endpointDomain} (the front door's CA signs names under it only)`;
  }
  const own = `<name>-${namespace}.${r.endpointDomain}`;
  return `the host ${host} is not namespace ${namespace}'s: its endpoints are ${own} (others only as the operator allows, ingress.allowedHosts)`;
}

/** Lower case, without a trailing dot: how hosts and the domain are compared. */
export function normalizeHost(host: string): string {
  return host.toLowerCase().replace(/\.$/, '');
}

/**
 * The operator's allowances as the chart hands them over (ALLOWED_HOSTS): JSON, a list of hosts by
 * namespace, `{"devtool": ["devtool.example.com"]}`. An Error names what is wrong.
 */
export function parseAllowedHosts(text: string): Record<string, string[]> {
  let value: unknown;
  try {
    value = JSON.parse(text || '{}');
  } catch (err) {
    throw new Error(`ALLOWED_HOSTS is not JSON: ${(err as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('ALLOWED_HOSTS: expected {"<namespace>": ["<host>", ...]}');
  const allowed: Record<string, string[]> = {};
  for (const [namespace, hosts] of Object.entries(value)) {
    if (!Array.isArray(hosts) || !hosts.every((h) => typeof h === 'string')) throw new Error(`ALLOWED_HOSTS: ${namespace}: expected a list of hosts`);
    allowed[namespace] = hosts.map(normalizeHost);
  }
  return allowed;
}
