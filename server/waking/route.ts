/**
 * The waking page: where the front door sends every request to an endpoint of a sleeping or waking
 * namespace (ingress/sleeping.ts). Only with the front door's key (front-door-key.ts) does it believe
 * the namespace and host the request names; without it, a 403 and nothing done. A sleeping
 * namespace's wake starts here (once: wake-once.ts); every answer is the 503 page of page.ts, which
 * reloads itself until the front door routes the host to the application again.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isDnsLabel } from '../../api/dns-label.ts';
import { FRONT_DOOR_KEY_HEADER, WAKE_HOST_HEADER, WAKE_NAMESPACE_HEADER, WAKING_PATH } from '../../api/front-door.ts';
import type { App } from '../service-deps.ts';
import { isFrontDoorKey } from './front-door-key.ts';
import { RELOAD_SECONDS, WAKING_PAGE_HEADERS, wakingLine, wakingPage } from './page.ts';
import type { WakeOnce } from './wake-once.ts';

/** What a namespace of the service is doing: put to sleep, woken and not available yet, or neither. */
export type NamespaceRest = 'sleeping' | 'waking' | 'awake';

/** The namespaces the waking page reads, and the wake it starts. */
export interface WakingDeps {
  /** The front door's key (DEVTOOL_FRONT_DOOR_KEY_FILE); absent: every request is refused. */
  key: string | undefined;
  /** What `namespace` is doing; undefined when this service did not make it. */
  rest(namespace: string): Promise<NamespaceRest | undefined>;
  /** Wakes as the system, one wake per namespace at a time; absent: a sleeping namespace is not woken. */
  wakes: WakeOnce | undefined;
}

/** A host name as the page shows it: anything else in the header is not shown. */
const HOST = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

export function registerWakingRoute(app: App, deps: WakingDeps): void {
  void app.register(async (scope) => {
    // Whatever the application's clients send (a form, a file upload) reaches this page: no body is read.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, payload, done) => {
      payload.resume();
      done(null);
    });
    scope.all(WAKING_PATH, { logLevel: 'warn' }, (request, reply) => answer(deps, request, reply));
  });
}

async function answer(deps: WakingDeps, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const text = (status: number, line: string) =>
    reply.code(status).header('content-type', 'text/plain; charset=utf-8').header('cache-control', 'no-store').send(line);
  if (!isFrontDoorKey(deps.key, request.headers[FRONT_DOOR_KEY_HEADER])) {
    return text(403, 'refused: only the front door asks for a wake\n');
  }
  const namespace = String(request.headers[WAKE_NAMESPACE_HEADER] ?? '');
  if (!isDnsLabel(namespace)) return text(400, `the front door named no namespace (${WAKE_NAMESPACE_HEADER})\n`);
  const host = String(request.headers[WAKE_HOST_HEADER] ?? '')
    .toLowerCase()
    .replace(/:\d+$/, '');
  const rest = await deps.rest(namespace);
  if (rest === undefined) return text(404, `no namespace ${namespace} of this devtool service\n`);
  if (rest === 'sleeping') {
    if (!deps.wakes) return text(503, `namespace ${namespace} is asleep: wake it with devtool namespace wake ${namespace}\n`);
    if (!deps.wakes.isRunning(namespace)) request.log.info({ namespace, host }, 'waking a namespace on a request to its endpoint');
    void deps.wakes.start(namespace);
  }
  reply.code(503).header('retry-after', String(RELOAD_SECONDS));
  if (request.method === 'GET' || request.method === 'HEAD') {
    return reply.headers(WAKING_PAGE_HEADERS).send(wakingPage(namespace, HOST.test(host) ? host : undefined));
  }
  return text(503, wakingLine(namespace));
}
