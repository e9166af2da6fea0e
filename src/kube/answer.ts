/**
 * The one line for an answer of the Kubernetes API server that refuses a request (or of a server
 * that is not one): what was refused, by whom, what to do. Pure; kube/transport.ts raises it for
 * every request the typed clients send, so no command prints the client's raw exception.
 */
import { oneLine } from '../base/text.ts';

export interface KubeAnswer {
  method: string;
  /** The request's whole URL. */
  url: string;
  status: number;
  /** The HTTP reason phrase of `status` (Forbidden), for a body that does not give one. */
  statusText: string;
  contentType: string;
  body: string;
  /** The context the request was made for; a devtool service context has other remedies. */
  context: { name: string; isDevtool: boolean };
}

/** A Kubernetes Status object, as the API server sends with every refusal. */
interface Status {
  kind: 'Status';
  message?: string;
  reason?: string;
}

/** True when the answer is not one an API server gives to a request that worked: an HTML page (a proxy's, a web server's). */
export function isForeignSuccess(a: Pick<KubeAnswer, 'contentType'>): boolean {
  return /^text\/html\b/i.test(a.contentType);
}

export function describeKubeAnswer(a: KubeAnswer): string {
  const url = new URL(a.url);
  const server = url.origin;
  const status = statusOf(a.body);
  const ctx = a.context;
  if (!status) {
    const what = a.status < 400 ? `${a.status} ${a.statusText} with an HTML page` : `${a.status} ${a.statusText}`;
    const check = ctx.isDevtool
      ? `check the cluster address the devtool service ${ctx.name} hands out (DEVTOOL_KUBE_SERVER replaces it)`
      : `check the server of context ${ctx.name} in the kubeconfig (KUBECONFIG)`;
    return `${server} is not a Kubernetes API server, or something in front of it refused: it answered ${what} to ${a.method} ${url.pathname}: ${check}`;
  }
  const api = `the Kubernetes API server ${server}`;
  const todo = requestWords(a.method, url);
  const code = `${a.status} ${status.reason ?? a.statusText}`;
  const message = oneLine(status.message ?? '');
  if (a.status === 401) {
    const remedy = ctx.isDevtool
      ? `log in again with 'devtool context use ${ctx.name}'`
      : `check the user of context ${ctx.name} in the kubeconfig (KUBECONFIG): its token or certificate may have expired`;
    return `${api} did not accept the credentials of context ${ctx.name} (${code}) to ${todo.words}: ${remedy}`;
  }
  if (a.status === 403) {
    const user = /\bUser "([^"]+)"/.exec(message)?.[1];
    const who = user ? ` to ${user}` : message ? ` (${message})` : '';
    const yours = ctx.isDevtool ? "--namespace, or 'devtool namespace use <name>'" : '--namespace';
    const remedy = todo.namespace
      ? `ask the owner of namespace ${todo.namespace} for access, or use a namespace of yours (${yours})`
      : "ask the cluster's administrator for this right";
    return `${api} refused to ${todo.words}${who} (${code}): ${remedy}`;
  }
  const verb = a.status >= 500 ? 'failed' : 'refused';
  return `${api} ${verb} to ${todo.words} (${code})${message ? `: ${message}` : ''}`;
}

/** "list ingresses in namespace shop", "read deployments/web in namespace shop", "create namespaces". */
export function requestWords(method: string, url: URL): { words: string; namespace?: string } {
  const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  // /api/v1/... or /apis/<group>/<version>/...
  const rest = parts[0] === 'api' ? parts.slice(2) : parts[0] === 'apis' ? parts.slice(3) : undefined;
  if (!rest || rest.length === 0) return { words: `${method} ${url.pathname}` };
  let namespace: string | undefined;
  let objectPath = rest;
  if (rest[0] === 'namespaces' && rest.length > 2) {
    namespace = rest[1];
    objectPath = rest.slice(2);
  }
  const named = objectPath.length > 1;
  const watch = url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1';
  const verb = VERBS[method.toUpperCase()]?.[named ? 1 : 0] ?? method;
  const where = namespace ? ` in namespace ${namespace}` : '';
  return { words: `${watch ? 'watch' : verb} ${objectPath.join('/')}${where}`, ...(namespace ? { namespace } : {}) };
}

/** The verb of a method on a collection, and on one object. */
const VERBS: Record<string, [string, string]> = {
  GET: ['list', 'read'],
  POST: ['create', 'create'],
  PUT: ['replace', 'replace'],
  PATCH: ['change', 'change'],
  DELETE: ['delete', 'delete'],
};

function statusOf(body: string): Status | undefined {
  try {
    const parsed = JSON.parse(body) as { kind?: unknown };
    return parsed && parsed.kind === 'Status' ? (parsed as Status) : undefined;
  } catch {
    return undefined;
  }
}
