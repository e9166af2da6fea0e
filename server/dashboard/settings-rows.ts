/**
 * The settings the service runs with, as the admin page's table (pure): one row per setting, its
 * value as the chart set it or what the service does without it. A secret is never shown, only
 * whether it is set.
 */
import { ALWAYS_RESERVED } from '../reserved-namespaces.ts';
import { DEFAULT_SESSION_TTL_MS, type ServiceConfig } from '../service-deps.ts';

export interface SettingRow {
  name: string;
  value: string;
}

/** "90m", "8h", "14d", "1d12h" (whole minutes; seconds under a minute; "0m" for nothing). */
export function duration(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  const [d, h, m] = [Math.floor(minutes / 1440), Math.floor((minutes % 1440) / 60), minutes % 60];
  const text = `${d ? `${d}d` : ''}${h ? `${h}h` : ''}${m ? `${m}m` : ''}`;
  return text || (ms > 0 ? `${Math.round(ms / 1000)}s` : '0m');
}

const perWindow = (l: { max: number; timeWindowMs: number }) => `${l.max} per ${duration(l.timeWindowMs)}`;

export function settingsRows(c: ServiceConfig): SettingRow[] {
  const or = (v: string | undefined, fallback: string) => (v === undefined || v === '' ? fallback : v);
  const signup = c.signup ?? { mode: 'open' as const, allow: [] };
  const idle = c.namespaceIdle ?? {};
  return [
    { name: 'Version', value: c.version },
    { name: 'Public URL', value: or(c.publicUrl, 'not set (the address each request came to)') },
    { name: 'Endpoint domain', value: or(c.endpointDomain, 'not set (no endpoints)') },
    { name: 'Ingress class', value: or(c.ingressClass, "not set (the cluster's default)") },
    { name: 'Registry', value: or(c.registry, 'not set') },
    { name: 'Builder', value: or(c.builder, 'not set') },
    {
      name: 'Hosted builds (BuildKit)',
      value: c.buildkit ? `${c.buildkit.host}:${c.buildkit.port}, ${c.buildkit.tls ? 'mutual TLS' : 'plain TCP'}` : 'not set (no hosted builds)',
    },
    { name: 'Pipeline runner image', value: or(c.runnerImage, 'not set (no pipelines)') },
    {
      name: 'Sign-up',
      value: signup.mode === 'open' ? 'open to anyone' : `allow list: ${signup.allow.length ? signup.allow.join(', ') : 'nobody'}`,
    },
    { name: 'Browser session length', value: duration(c.sessionTtlMs ?? DEFAULT_SESSION_TTL_MS) },
    { name: 'Rate limit (login and token routes, per address)', value: perWindow(c.rateLimit) },
    { name: 'Failed sign-ins per account', value: c.accountLoginLimit ? perWindow(c.accountLoginLimit) : 'no limit' },
    {
      name: 'Device codes waiting',
      value: c.pendingDeviceCodes ? `${c.pendingDeviceCodes.total} in all, ${c.pendingDeviceCodes.perClient} per address` : 'no limit',
    },
    {
      name: 'Reserved namespaces',
      value: [...(c.serviceNamespace ? [c.serviceNamespace] : []), ...(c.reservedNamespaces ?? []), ...ALWAYS_RESERVED].join(', '),
    },
    { name: 'Idle namespaces sleep after', value: idle.sleepAfterMs ? duration(idle.sleepAfterMs) : 'never' },
    { name: 'Idle namespaces are deleted after', value: idle.deleteAfterMs ? duration(idle.deleteAfterMs) : 'never' },
    { name: 'Trusted proxies', value: `${c.trustedProxies ?? 1}${c.trustedProxyAddresses?.length ? ` from ${c.trustedProxyAddresses.join(', ')}` : ''}` },
    { name: 'CA certificate handed out', value: c.certificate ? 'set' : 'not set' },
    { name: 'Metrics token', value: c.metricsToken ? 'set' : 'not set (no /metrics)' },
  ];
}
