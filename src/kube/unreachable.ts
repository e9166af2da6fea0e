/**
 * The one translation of network failures of the cluster's client (node-fetch's "request to URL
 * failed, reason: connect ECONNREFUSED ...", wherever a command let it through, wrapped in its own
 * words or not) into one line: which server could not be reached, why in plain words, what to check.
 * No imports: runCli calls it on every error line it prints.
 */

const FAILED_REQUEST = /request to (https?:\/\/[^/\s?#]+)(\S*) failed, reason: (.*)$/;

const REASONS: readonly [RegExp, string][] = [
  [/ECONNREFUSED/, 'connection refused'],
  [/ENOTFOUND|EAI_AGAIN/, 'host not found'],
  [/ETIMEDOUT|ESOCKETTIMEDOUT|timed? ?out/i, 'timed out'],
  [/ECONNRESET|socket hang up/i, 'connection reset'],
  [/EHOSTUNREACH|ENETUNREACH/, 'no route to the host'],
  [/certificate|self[- ]signed|CERT_|SSL|TLS/i, 'TLS certificate not accepted'],
];

/** The one-line message for an error whose text is a failed request, or undefined for any other. */
export function describeUnreachable(message: string): string | undefined {
  const m = FAILED_REQUEST.exec(message);
  if (!m) return undefined;
  const [, server, path, reason] = m as unknown as [string, string, string, string];
  const why = REASONS.find(([re]) => re.test(reason))?.[1] ?? reason.trim();
  // What the command was doing, when it said so before the client's words ("cannot read namespace default").
  const doing = message
    .slice(0, m.index)
    .replace(/[\s:;,]+$/, '')
    .trim();
  const kube = /^\/(api|apis|version|healthz|readyz)(\/|$|\?)/.test(path);
  const what = kube ? `the Kubernetes API server ${server}` : server;
  const check = kube
    ? /certificate/.test(why)
      ? "check the cluster's certificate authority in the kubeconfig (KUBECONFIG) of the context"
      : 'check that the cluster is running and that the server of the context in the kubeconfig (KUBECONFIG) is right'
    : 'check that it is running and reachable from here';
  const purpose = /^cannot /i.test(doing) ? ` to ${doing.replace(/^cannot /i, '')}` : '';
  const context = doing && !purpose ? `; ${doing}` : '';
  // The namespace the request was for: with the server, which cluster and namespace the command chose.
  const namespace = kube ? /\/namespaces\/([^/?]+)/.exec(path)?.[1] : undefined;
  const where = namespace && !purpose.includes(`namespace ${namespace}`) ? ` in namespace ${namespace}` : '';
  return `cannot reach ${what} (${why}${context})${purpose}${where}: ${check}`;
}
