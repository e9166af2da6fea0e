/** The service's settings, from its environment (the Helm chart sets them). */
import { DNS_LABEL_PATTERN } from '../api/dns-label.ts';
import { readFileSync } from 'node:fs';
import { parseDuration } from '../src/base/duration.ts';
import { VERSION } from '../src/version.ts';
import type { BuildkitUpstream } from './build-tunnel.ts';
import { parseCidrs } from './client-address.ts';
import type { IdleSettings } from './namespaces/idle.ts';
import type { ServiceConfig } from './service-deps.ts';
import type { KubeCredentialSettings } from './kube-credentials.ts';
import { type NamespacePolicy, readNamespacePolicy } from './store/namespace-policy.ts';

export interface ServeSettings {
  port: number;
  host: string;
  /** The service's own namespace (POD_NAMESPACE, from the downward API). */
  namespace: string;
  /** Labels put on every object the service creates (DEVTOOL_OBJECT_LABELS: cost centres, test runs). */
  objectLabels: Record<string, string>;
  logLevel: string;
  config: ServiceConfig;
  /** Users' Kubernetes credentials (kube-credentials.ts); absent without DEVTOOL_KUBE_SERVER. */
  kube?: KubeCredentialSettings;
  /** preview environments: how often each replica moves destroys on, and when a preview is stale. */
  previews: { sweepIntervalMs: number; staleAfterMs?: number };
  /** What every namespace the service makes enforces: Pod Security, quota, limits. */
  namespacePolicy: NamespacePolicy;
  /** Namespace sleep: how often each replica sweeps idle namespaces (waking ones are looked at every WAKING_CHECK_MS). */
  sleep: { sweepIntervalMs: number };
}

/** Reads the settings; a wrong one is an Error naming the variable. */
export function readSettings(env: NodeJS.ProcessEnv): ServeSettings {
  const int = (name: string, fallback: number): number => {
    const text = env[name];
    if (text === undefined || text === '') return fallback;
    const n = Number(text);
    if (!Number.isInteger(n) || n <= 0) throw new Error(`${name}=${text}: expected a positive whole number`);
    return n;
  };
  const namespace = env['POD_NAMESPACE'];
  if (!namespace) throw new Error('POD_NAMESPACE is not set: the namespace the service keeps its accounts in');
  const config: ServiceConfig = {
    version: VERSION,
    rateLimit: { max: int('DEVTOOL_RATE_LIMIT', 30), timeWindowMs: 60_000 },
    accountLoginLimit: { max: int('DEVTOOL_ACCOUNT_LOGIN_LIMIT', 10), timeWindowMs: 15 * 60_000 },
    pendingDeviceCodes: { total: int('DEVTOOL_DEVICE_CODES_PENDING', 100), perClient: int('DEVTOOL_DEVICE_CODES_PENDING_PER_CLIENT', 5) },
    serviceNamespace: namespace,
    reservedNamespaces: names(env['DEVTOOL_RESERVED_NAMESPACES']),
  };
  const hops = env['DEVTOOL_TRUSTED_PROXIES'];
  if (hops !== undefined && hops !== '') {
    if (!/^\d+$/.test(hops)) throw new Error(`DEVTOOL_TRUSTED_PROXIES=${hops}: expected a number of proxies (0 or more)`);
    config.trustedProxies = Number(hops);
  }
  const proxyAddresses = env['DEVTOOL_TRUSTED_PROXY_ADDRESSES'];
  if (proxyAddresses) config.trustedProxyAddresses = parseCidrs(proxyAddresses, `DEVTOOL_TRUSTED_PROXY_ADDRESSES=${proxyAddresses}`);
  const optional = (name: string) => (env[name] ? env[name] : undefined);
  const publicUrl = optional('DEVTOOL_PUBLIC_URL');
  if (publicUrl) config.publicUrl = publicUrl.replace(/\/+$/, '');
  const endpointDomain = optional('DEVTOOL_ENDPOINT_DOMAIN');
  if (endpointDomain) config.endpointDomain = endpointDomain;
  const ingressClass = optional('DEVTOOL_INGRESS_CLASS');
  if (ingressClass) {
    if (ingressClass.length > 253 || !INGRESS_CLASS_NAME.test(ingressClass)) {
      throw new Error(`DEVTOOL_INGRESS_CLASS=${ingressClass}: not an IngressClass name (lower-case letters, digits, '-' and '.')`);
    }
    config.ingressClass = ingressClass;
  }
  const registry = optional('DEVTOOL_REGISTRY');
  if (registry) config.registry = registry;
  const runnerImage = optional('DEVTOOL_RUNNER_IMAGE');
  if (runnerImage) config.runnerImage = runnerImage;
  const builder = optional('DEVTOOL_BUILDER');
  if (builder) config.builder = builder;
  const caFile = optional('DEVTOOL_CA_FILE');
  if (caFile) {
    try {
      config.certificate = readFileSync(caFile, 'utf8');
    } catch (err) {
      throw new Error(`DEVTOOL_CA_FILE=${caFile}: ${(err as Error).message}`);
    }
    if (!config.certificate.includes('-----BEGIN CERTIFICATE-----')) throw new Error(`DEVTOOL_CA_FILE=${caFile}: not a PEM certificate`);
  }
  // The waking page believes only requests with the front door's key (server/waking/front-door-key.ts).
  const keyFile = optional('DEVTOOL_FRONT_DOOR_KEY_FILE');
  if (keyFile) {
    try {
      config.frontDoorKey = readFileSync(keyFile, 'utf8').trim();
    } catch (err) {
      throw new Error(`DEVTOOL_FRONT_DOOR_KEY_FILE=${keyFile}: ${(err as Error).message}`);
    }
    if (config.frontDoorKey.length < 32) throw new Error(`DEVTOOL_FRONT_DOOR_KEY_FILE=${keyFile}: the key is shorter than 32 characters`);
  }
  // hosted builds
  const buildkit = readBuildkitUpstream(env);
  if (buildkit) config.buildkit = buildkit;
  // Analytics and metrics: GET /metrics answers only a scraper with this token.
  const metricsToken = optional('DEVTOOL_METRICS_TOKEN');
  if (metricsToken) config.metricsToken = metricsToken;
  // login (browser, device code, pages)
  const signupMode = env['DEVTOOL_SIGNUP_MODE'] || 'open';
  if (signupMode !== 'open' && signupMode !== 'allowList') throw new Error(`DEVTOOL_SIGNUP_MODE=${signupMode}: expected open or allowList`);
  const allow = names(env['DEVTOOL_SIGNUP_ALLOW']);
  if (env['DEVTOOL_SIGNUP_MODE'] || allow.length) config.signup = { mode: signupMode, allow };
  const sessionTtlMs = readSessionLength(env);
  if (sessionTtlMs !== undefined) config.sessionTtlMs = sessionTtlMs;
  if (publicUrl && !/^https?:\/\/[^/]+$/.test(config.publicUrl!)) throw new Error(`DEVTOOL_PUBLIC_URL=${publicUrl}: expected http(s)://HOST[:PORT]`);

  const idle = readIdleSettings(env);
  if (idle.sleepAfterMs !== undefined || idle.deleteAfterMs !== undefined) config.namespaceIdle = idle;

  const objectLabels = parseLabels(env['DEVTOOL_OBJECT_LABELS'] ?? '');
  const settings: ServeSettings = {
    port: int('PORT', 8080),
    host: env['HOST'] || '0.0.0.0',
    namespace,
    objectLabels,
    logLevel: env['LOG_LEVEL'] || 'info',
    config,
    previews: readPreviewSettings(env),
    sleep: { sweepIntervalMs: readSleepSweepInterval(env) },
    namespacePolicy: readNamespacePolicy(env),
  };
  // cluster credentials: users' kubeconfigs name this API server and trust this CA.
  const kubeServer = optional('DEVTOOL_KUBE_SERVER');
  if (kubeServer) {
    if (!/^https?:\/\/[^/]/.test(kubeServer)) throw new Error(`DEVTOOL_KUBE_SERVER=${kubeServer}: expected the API server's URL (https://HOST:PORT)`);
    const caFile = optional('DEVTOOL_KUBE_CA_FILE') ?? '/var/run/secrets/kubernetes.io/serviceaccount/ca.crt';
    let ca: string;
    try {
      ca = readFileSync(caFile, 'utf8');
    } catch (err) {
      throw new Error(`DEVTOOL_KUBE_CA_FILE=${caFile}: ${(err as Error).message}`);
    }
    if (!ca.includes('-----BEGIN CERTIFICATE-----')) throw new Error(`DEVTOOL_KUBE_CA_FILE=${caFile}: not a PEM certificate`);
    const tokenSeconds = int('DEVTOOL_KUBE_TOKEN_SECONDS', 3600);
    if (tokenSeconds < 600) throw new Error(`DEVTOOL_KUBE_TOKEN_SECONDS=${tokenSeconds}: at least 600 (the shortest token Kubernetes issues)`);
    settings.kube = { server: kubeServer.replace(/\/+$/, ''), certificateAuthority: ca, tokenSeconds };
  }
  return settings;
}

/**
 * preview environments: DEVTOOL_PREVIEW_SWEEP_INTERVAL (default 1m) and DEVTOOL_PREVIEW_STALE_AFTER
 * (unset or 0: previews are never destroyed for being stale), Go-style durations like the CLI's.
 */
export function readPreviewSettings(env: NodeJS.ProcessEnv): ServeSettings['previews'] {
  const duration = (name: string): number | undefined => {
    const text = env[name]?.trim();
    if (!text) return undefined;
    const ms = parseDuration(text);
    if (ms === undefined) throw new Error(`${name}=${text}: expected a duration with a unit, e.g. 168h or 30m`);
    return ms;
  };
  const sweepIntervalMs = duration('DEVTOOL_PREVIEW_SWEEP_INTERVAL') ?? 60_000;
  if (sweepIntervalMs < 1000) throw new Error(`DEVTOOL_PREVIEW_SWEEP_INTERVAL=${env['DEVTOOL_PREVIEW_SWEEP_INTERVAL']}: at least 1s`);
  const staleAfterMs = duration('DEVTOOL_PREVIEW_STALE_AFTER');
  return { sweepIntervalMs, ...(staleAfterMs ? { staleAfterMs } : {}) };
}

/** A Go-style duration that may start with whole days (`14d`, `1d12h`), in milliseconds; undefined when it is not one. */
function daysDuration(text: string): number | undefined {
  const days = /^(\d+)d(.*)$/.exec(text);
  const ms = days ? parseDuration(days[2] || '0') : parseDuration(text);
  return ms === undefined ? undefined : ms + (days ? Number(days[1]) * 86_400_000 : 0);
}

/** The longest browser session the chart may set: a sign-in outlives a password change, so not for ever. */
const MAX_SESSION_MS = 90 * 86_400_000;

/**
 * How long a sign-in on the service's pages lasts (the chart's `service.sessionLength`):
 * DEVTOOL_SESSION_LENGTH, a duration like the idle settings' (`8h`, `12h`, `7d`) from 5m to 90d;
 * unset: DEFAULT_SESSION_TTL_MS (service-deps.ts). Shorter than 5 minutes, a form filled in slowly
 * would be refused.
 */
export function readSessionLength(env: NodeJS.ProcessEnv): number | undefined {
  const text = env['DEVTOOL_SESSION_LENGTH']?.trim();
  if (!text) return undefined;
  const ms = daysDuration(text);
  if (ms === undefined) throw new Error(`DEVTOOL_SESSION_LENGTH=${text}: expected a duration with a unit, e.g. 8h, 90m or 7d`);
  if (ms < 5 * 60_000 || ms > MAX_SESSION_MS) throw new Error(`DEVTOOL_SESSION_LENGTH=${text}: expected 5m to 90d`);
  return ms;
}

/**
 * Idle namespaces (the chart's `sleep.afterIdle`, `sleep.deleteAfterIdle`): DEVTOOL_SLEEP_AFTER_IDLE
 * and DEVTOOL_DELETE_AFTER_IDLE, Go-style durations that may start with whole days (`14d`, `1d12h`);
 * unset or 0: never. A namespace must be able to sleep before it is deleted, so the deletion comes later.
 */
export function readIdleSettings(env: NodeJS.ProcessEnv): IdleSettings {
  const duration = (name: string): number | undefined => {
    const text = env[name]?.trim();
    if (!text) return undefined;
    const total = daysDuration(text);
    if (total === undefined) throw new Error(`${name}=${text}: expected a duration with a unit, e.g. 3h, 90m or 14d`);
    if (total > 0 && total < 60_000) throw new Error(`${name}=${text}: at least 1m`);
    return total || undefined;
  };
  const sleepAfterMs = duration('DEVTOOL_SLEEP_AFTER_IDLE');
  const deleteAfterMs = duration('DEVTOOL_DELETE_AFTER_IDLE');
  if (sleepAfterMs !== undefined && deleteAfterMs !== undefined && deleteAfterMs <= sleepAfterMs) {
    const [deleteText, sleepText] = [env['DEVTOOL_DELETE_AFTER_IDLE']?.trim(), env['DEVTOOL_SLEEP_AFTER_IDLE']?.trim()];
    throw new Error(`DEVTOOL_DELETE_AFTER_IDLE=${deleteText}: must be longer than DEVTOOL_SLEEP_AFTER_IDLE=${sleepText}`);
  }
  return { ...(sleepAfterMs !== undefined ? { sleepAfterMs } : {}), ...(deleteAfterMs !== undefined ? { deleteAfterMs } : {}) };
}

/** DEVTOOL_SLEEP_SWEEP_INTERVAL (the chart's `sleep.sweepInterval`, default 1m): how often idle namespaces are looked at. */
export function readSleepSweepInterval(env: NodeJS.ProcessEnv): number {
  const text = env['DEVTOOL_SLEEP_SWEEP_INTERVAL']?.trim();
  if (!text) return 60_000;
  const ms = parseDuration(text);
  if (ms === undefined || ms < 1000) throw new Error(`DEVTOOL_SLEEP_SWEEP_INTERVAL=${text}: expected a duration of at least 1s, e.g. 1m`);
  return ms;
}

/**
 * hosted builds: the chart's BuildKit daemon. DEVTOOL_BUILDKIT_ADDRESS is HOST:PORT; with
 * DEVTOOL_BUILDKIT_TLS_DIR (ca.crt, tls.crt, tls.key, as a kubernetes.io/tls Secret plus its CA)
 * the service dials it with mutual TLS, checking the name DEVTOOL_BUILDKIT_SERVER_NAME (default HOST).
 */
export function readBuildkitUpstream(env: NodeJS.ProcessEnv, read: (file: string) => string = (f) => readFileSync(f, 'utf8')): BuildkitUpstream | undefined {
  const address = env['DEVTOOL_BUILDKIT_ADDRESS']?.trim();
  if (!address) return undefined;
  const m = /^(?:tcp:\/\/)?([A-Za-z0-9.-]+|\[[0-9a-fA-F:]+\]):(\d{1,5})$/.exec(address);
  const port = m ? Number(m[2]) : 0;
  if (!m || port < 1 || port > 65535) throw new Error(`DEVTOOL_BUILDKIT_ADDRESS=${address}: expected HOST:PORT of the BuildKit daemon`);
  const host = m[1]!.replace(/^\[|\]$/g, '');
  const upstream: BuildkitUpstream = { host, port };
  const dir = env['DEVTOOL_BUILDKIT_TLS_DIR']?.trim();
  if (dir) {
    const pem = (name: string, marker: string): string => {
      let text: string;
      try {
        text = read(`${dir}/${name}`);
      } catch (err) {
        throw new Error(`DEVTOOL_BUILDKIT_TLS_DIR=${dir}: cannot read ${name}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      }
      if (!text.includes(marker)) throw new Error(`DEVTOOL_BUILDKIT_TLS_DIR=${dir}: ${name} is not PEM (${marker})`);
      return text;
    };
    upstream.tls = {
      ca: pem('ca.crt', '-----BEGIN CERTIFICATE-----'),
      cert: pem('tls.crt', '-----BEGIN CERTIFICATE-----'),
      key: pem('tls.key', 'PRIVATE KEY-----'),
      servername: env['DEVTOOL_BUILDKIT_SERVER_NAME']?.trim() || host,
    };
  }
  return upstream;
}

const names = (text: string | undefined): string[] =>
  (text ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);

/** A label key's optional prefix is a DNS subdomain: DNS labels joined by dots. */
const DNS_LABEL = DNS_LABEL_PATTERN.slice(1, -1);
/** The name of an IngressClass (of most objects): a DNS subdomain. */
const INGRESS_CLASS_NAME = new RegExp(`^${DNS_LABEL}(\\.${DNS_LABEL})*$`);
const LABEL_KEY = new RegExp(`^(${DNS_LABEL}(\\.${DNS_LABEL})*\\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`);
const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

/** `a=1,example.com/b=2` -> labels; a wrong one is an Error naming it. */
export function parseLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const item of text
    .split(',')
    .map((i) => i.trim())
    .filter(Boolean)) {
    const eq = item.indexOf('=');
    const key = eq < 0 ? item : item.slice(0, eq);
    const value = eq < 0 ? '' : item.slice(eq + 1);
    if (eq < 0 || !LABEL_KEY.test(key) || !LABEL_VALUE.test(value)) {
      throw new Error(`DEVTOOL_OBJECT_LABELS: "${item}" is not a Kubernetes label (key=value, comma-separated)`);
    }
    labels[key] = value;
  }
  return labels;
}
