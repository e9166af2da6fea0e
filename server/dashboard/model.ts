/**
 * What the dashboard shows of a namespace, made from the Kubernetes objects as the API server sends
 * them (a list's items or a watch event's object, plain JSON): pure functions, so the first paint
 * and every live update render from the same summaries.
 */
import { DEV_SESSION_ANNOTATION, type DevSessionState, decodeDevSession } from '../../api/dev-session.ts';
import { ENVIRONMENT_LABEL, ENVIRONMENT_STATE_LABEL as STATE_LABEL } from '../../api/activity-labels.ts';

/** The kinds the dashboard reads of a namespace; `environments` are ConfigMaps with the state label. */
export const KINDS = ['pods', 'deployments', 'statefulsets', 'environments', 'ingresses'] as const;
export type Kind = (typeof KINDS)[number];

/** Where each kind is listed and watched, and with which selector. */
export const KIND_API: Record<Kind, { group: string; resource: string; path: (namespace: string) => string; labelSelector?: string }> = {
  pods: { group: '', resource: 'pods', path: (ns) => `/api/v1/namespaces/${ns}/pods` },
  deployments: { group: 'apps', resource: 'deployments', path: (ns) => `/apis/apps/v1/namespaces/${ns}/deployments` },
  statefulsets: { group: 'apps', resource: 'statefulsets', path: (ns) => `/apis/apps/v1/namespaces/${ns}/statefulsets` },
  environments: { group: '', resource: 'configmaps', path: (ns) => `/api/v1/namespaces/${ns}/configmaps`, labelSelector: STATE_LABEL },
  ingresses: { group: 'networking.k8s.io', resource: 'ingresses', path: (ns) => `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses` },
};

export interface PodSummary {
  name: string;
  /** Running, Pending, Succeeded, Failed, Terminating, or a container's waiting reason (CrashLoopBackOff...). */
  status: string;
  ready: boolean;
  restarts: number;
  /** Why a container last ended badly ("Error, exit code 1", "OOMKilled"), or why it cannot start. */
  lastFailure?: string;
  labels: Record<string, string>;
  /** Its containers, in spec order, each with the instance running now or last (undefined: never started). */
  containers: ContainerSummary[];
}

export interface ContainerSummary {
  name: string;
  /** The container's runtime id: a restarted container gets a new one, and its log starts afresh. */
  instance?: string;
}

export interface WorkloadSummary {
  kind: 'Deployment' | 'StatefulSet';
  name: string;
  desired: number;
  ready: number;
  environment?: string;
  /** The pod selector's matchLabels: which pods are this workload's. */
  selector: Record<string, string>;
  /** What the `up` running this dev container publishes (a well-formed annotation only). */
  session?: DevSessionState;
}

export interface EnvironmentSummary {
  name: string;
  status: string;
  /** compose or manifest, as the record says. */
  source: string;
  updated: string;
  error?: string;
}

export interface IngressSummary {
  name: string;
  environment?: string;
  hosts: string[];
}

export type Summary<K extends Kind> = K extends 'pods'
  ? PodSummary
  : K extends 'deployments' | 'statefulsets'
    ? WorkloadSummary
    : K extends 'environments'
      ? EnvironmentSummary
      : IngressSummary;

/** The parts of a Kubernetes object the summaries read; everything optional, as on the wire. */
interface Obj {
  metadata?: { name?: string; labels?: Record<string, string>; annotations?: Record<string, string>; deletionTimestamp?: unknown };
  spec?: {
    replicas?: number;
    selector?: { matchLabels?: Record<string, string> };
    containers?: { name?: string }[];
    rules?: { host?: string }[];
  };
  status?: {
    phase?: string;
    reason?: string;
    readyReplicas?: number;
    containerStatuses?: ContainerStatus[];
    initContainerStatuses?: ContainerStatus[];
  };
  data?: Record<string, string>;
}
interface ContainerStatus {
  name?: string;
  containerID?: string;
  ready?: boolean;
  restartCount?: number;
  state?: { waiting?: { reason?: string }; terminated?: { reason?: string; exitCode?: number } };
  lastState?: { terminated?: { reason?: string; exitCode?: number } };
}

const nameOf = (o: Obj) => o.metadata?.name ?? '';

/** Reasons a container waits that mean it will not start by itself. */
const BAD_WAITING = /BackOff|Err|Invalid|CreateContainerConfigError/;

export function podSummary(raw: unknown): PodSummary {
  const o = raw as Obj;
  const containers = o.status?.containerStatuses ?? [];
  const all = [...(o.status?.initContainerStatuses ?? []), ...containers];
  const waiting = all.map((c) => c.state?.waiting?.reason).find((r) => r && r !== 'ContainerCreating' && r !== 'PodInitializing');
  const terminatedBadly = all.map((c) => c.state?.terminated).find((t) => t && t.exitCode !== 0);
  const last = all.map((c) => c.lastState?.terminated).find((t) => t);
  const ended = (t: { reason?: string; exitCode?: number }) => `${t.reason ?? 'Terminated'}, exit code ${t.exitCode ?? '?'}`;
  const lastFailure = waiting && BAD_WAITING.test(waiting) ? waiting : terminatedBadly ? ended(terminatedBadly) : last ? ended(last) : undefined;
  const status = o.metadata?.deletionTimestamp ? 'Terminating' : (waiting ?? o.status?.reason ?? o.status?.phase ?? 'Unknown');
  return {
    name: nameOf(o),
    status,
    ready: containers.length > 0 && containers.every((c) => c.ready === true),
    restarts: containers.reduce((n, c) => n + (c.restartCount ?? 0), 0),
    ...(lastFailure ? { lastFailure } : {}),
    labels: o.metadata?.labels ?? {},
    containers: (o.spec?.containers ?? []).map((c) => {
      const instance = containers.find((s) => s.name === c.name)?.containerID;
      return { name: c.name ?? '', ...(instance ? { instance } : {}) };
    }),
  };
}

export function workloadSummary(kind: WorkloadSummary['kind']) {
  return (raw: unknown): WorkloadSummary => {
    const o = raw as Obj;
    const environment = o.metadata?.labels?.[ENVIRONMENT_LABEL];
    const session = kind === 'Deployment' ? decodeDevSession(o.metadata?.annotations?.[DEV_SESSION_ANNOTATION]) : undefined;
    return {
      kind,
      name: nameOf(o),
      desired: o.spec?.replicas ?? 1,
      ready: o.status?.readyReplicas ?? 0,
      ...(environment ? { environment } : {}),
      selector: o.spec?.selector?.matchLabels ?? {},
      ...(session ? { session } : {}),
    };
  };
}

export function environmentSummary(raw: unknown): EnvironmentSummary {
  const o = raw as Obj;
  const d = o.data ?? {};
  return {
    name: d['name'] ?? o.metadata?.labels?.[STATE_LABEL] ?? nameOf(o),
    status: d['status'] ?? 'unknown',
    source: d['source'] ?? '',
    updated: d['updated'] ?? '',
    ...(d['error'] ? { error: d['error'] } : {}),
  };
}

export function ingressSummary(raw: unknown): IngressSummary {
  const o = raw as Obj;
  const environment = o.metadata?.labels?.[ENVIRONMENT_LABEL];
  const hosts = [...new Set((o.spec?.rules ?? []).map((r) => r.host).filter((h): h is string => !!h))].sort();
  return { name: nameOf(o), ...(environment ? { environment } : {}), hosts };
}

export const SUMMARIZE: { [K in Kind]: (raw: unknown) => Summary<K> } = {
  pods: podSummary,
  deployments: workloadSummary('Deployment'),
  statefulsets: workloadSummary('StatefulSet'),
  environments: environmentSummary,
  ingresses: ingressSummary,
};

/** A namespace's objects, summarized, each list sorted by name. */
export interface NamespaceSnapshot {
  pods: PodSummary[];
  workloads: WorkloadSummary[];
  environments: EnvironmentSummary[];
  ingresses: IngressSummary[];
}

const byName = <T extends { name: string }>(list: readonly T[]) => [...list].sort((a, b) => a.name.localeCompare(b.name));

export function snapshotOf(items: { [K in Kind]: readonly Summary<K>[] }): NamespaceSnapshot {
  return {
    pods: byName(items.pods),
    workloads: byName([...items.deployments, ...items.statefulsets]),
    environments: byName(items.environments),
    ingresses: byName(items.ingresses),
  };
}

/** The pods a workload selects (every label of its selector), and those no workload selects. */
export function podsOf(workload: WorkloadSummary, pods: readonly PodSummary[]): PodSummary[] {
  const sel = Object.entries(workload.selector);
  if (sel.length === 0) return [];
  return pods.filter((p) => sel.every(([k, v]) => p.labels[k] === v));
}

/** Pods ready / total: what the home page shows per namespace. */
export function podCounts(pods: readonly PodSummary[]): { ready: number; total: number } {
  const live = pods.filter((p) => p.status !== 'Succeeded');
  return { ready: live.filter((p) => p.ready).length, total: live.length };
}

/** The https:// endpoints of an environment, from its Ingresses (what `devtool endpoints` prints). */
export function endpointsOf(environment: string, ingresses: readonly IngressSummary[]): string[] {
  return [...new Set(ingresses.filter((i) => i.environment === environment).flatMap((i) => i.hosts.map((h) => `https://${h}`)))].sort();
}

/** "2026-12-02 13:21 UTC" from an ISO time; empty stays empty. */
export function when(iso: string): string {
  const t = Date.parse(iso);
  return Number.isNaN(t) ? iso : `${new Date(t).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}
