/**
 * The endpoints of a sleeping namespace. Pure: translate.ts asks it for the route of each host of a
 * namespace that sleeps or wakes, the controller for which namespaces those are.
 *
 * While a namespace has SLEEPING_SINCE or WAKING_SINCE (api/namespace-sleep.ts, written by the
 * service), its workloads have no pods to answer, so every host of its Ingresses goes to the devtool
 * service's waking page (server/waking/route.ts) instead of its backends: the service starts the
 * wake and answers a page that reloads itself. Once the service removes WAKING_SINCE, the next
 * translation routes the hosts to their backends again and the reload reaches the application.
 *
 * The service believes the namespace and host headers only with the front door's key (the chart's
 * Secret, mounted in both): Caddy sets all three on the way, replacing whatever the client sent, so
 * a client can name neither another namespace nor forge the key.
 */
import type { V1Namespace, V1Service } from '@kubernetes/client-node';
import { FRONT_DOOR_KEY_HEADER, WAKE_HOST_HEADER, WAKE_NAMESPACE_HEADER, WAKING_PATH } from '../api/front-door.ts';
import { SLEEPING_SINCE, WAKING_SINCE } from '../api/namespace-sleep.ts';

/** A namespace whose workloads are down: put to sleep, or woken and not available yet. */
export type Rest = 'sleeping' | 'waking';

/** Where the waking page is: the devtool service's Service, and the key it checks. */
export interface WakingPage {
  service: { namespace: string; name: string; port: string | number };
  key: string;
}

/** The namespaces that sleep or wake, by name (a waking one may still carry SLEEPING_SINCE: it wakes). */
export function restingNamespaces(namespaces: readonly V1Namespace[]): Map<string, Rest> {
  const resting = new Map<string, Rest>();
  for (const ns of namespaces) {
    const name = ns.metadata?.name;
    const notes = ns.metadata?.annotations ?? {};
    if (!name) continue;
    if (notes[WAKING_SINCE] !== undefined) resting.set(name, 'waking');
    else if (notes[SLEEPING_SINCE] !== undefined) resting.set(name, 'sleeping');
  }
  return resting;
}

type Handler = Record<string, unknown>;

/**
 * The handlers of every request to `host` of the resting `namespace`: its path rewritten to the
 * waking page, then proxied to the service's ClusterIP with the key, the namespace and the host
 * the client asked for. Without the service (not installed, or its Service not seen yet), a 503
 * that says so.
 */
export function wakingHandlers(namespace: string, page: WakingPage | undefined, services: readonly V1Service[]): Handler[] {
  const dial = page && serviceDial(page, services);
  if (!page || !dial) {
    return [
      {
        handler: 'static_response',
        status_code: 503,
        body: `namespace ${namespace} is asleep, and the devtool service that wakes it cannot be reached\n`,
        headers: { 'Content-Type': ['text/plain; charset=utf-8'], 'Retry-After': ['10'] },
      },
    ];
  }
  return [
    { handler: 'rewrite', uri: WAKING_PATH },
    {
      handler: 'reverse_proxy',
      upstreams: [{ dial }],
      headers: {
        request: {
          set: {
            [FRONT_DOOR_KEY_HEADER]: [page.key],
            [WAKE_NAMESPACE_HEADER]: [namespace],
            [WAKE_HOST_HEADER]: ['{http.request.host}'],
          },
        },
      },
      transport: { protocol: 'http', keep_alive: { enabled: false } },
    },
  ];
}

/** The service's ClusterIP and port, as the proxy on the node's network dials it. */
function serviceDial(page: WakingPage, services: readonly V1Service[]): string | undefined {
  const { namespace, name, port } = page.service;
  const svc = services.find((s) => s.metadata?.namespace === namespace && s.metadata?.name === name);
  const ip = svc?.spec?.clusterIP;
  if (!ip || ip === 'None') return undefined;
  const p = svc.spec?.ports?.find((x) => (typeof port === 'number' ? x.port === port : x.name === port));
  return p ? `${ip}:${p.port}` : undefined;
}
