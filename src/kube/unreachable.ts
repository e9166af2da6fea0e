/**
 * The one translation of network failures of the cluster's client (node-fetch's "request to URL
 * failed, reason: connect ECONNREFUSED ...", wherever a command let it through, wrapped in its own
 * words or not) into one line: which server could not be reached, why in plain words, what to check.
 * No imports: runCli calls it on every error line it prints.
 */

const FAILED_REQUEST = /request to (https?:\/\/[^/\s?#]+)(\S*) failed, reason: (.*)$/;

/** The reason the timeouts of base/network-timeouts.ts give (TIMEOUT_TEXT): "no TLS handshake within 10s; DEVTOOL_CONNECT_TIMEOUT sets the wait". */
const OWN_TIMEOUT = /\bno [\w ]+ within \S+; DEVTOOL_\w+ sets the wait\b/;

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
  // Our own timeouts say already what did not come in time, and which variable sets the wait.
  const why = OWN_TIMEOUT.test(reason) ? reason.trim() : (REASONS.find(([re]) => re.test(reason))?.[1] ?? reason.trim());
  // What the command was doing, when it said so before the client's words ("cannot read namespace default").
  const doing = message
    .slice(0, m.index)
    .replace(/[\s:;,]+$/, '')
    .trim();
  const kube = /^\/(api|apis|version|healthz|readyz)(\/|$|\?)/.test(path);
  const what = kube ? `the Kubernetes API server ${server}` : server;
  // A server that accepts and never answers, or drops every packet: a VPN that is down looks like this.
  const silent = OWN_TIMEOUT.test(why);
  const check = kube
    ? /certificate/.test(why)
      ? "check the cluster's certificate authority in the kubeconfig (KUBECONFIG) of the context"
      : silent
        ? 'check that the cluster is running, that the network to it (a VPN) is up, and that the server of the context in the kubeconfig (KUBECONFIG) is right'
        : 'check that the cluster is running and that the server of the context in the kubeconfig (KUBECONFIG) is right'
    : silent
      ? 'check that it is running and that the network to it (a VPN) is up'
      : 'check that it is running and reachable from here';
  const purpose = /^cannot /i.test(doing) ? ` to ${doing.replace(/^cannot /i, '')}` : '';
  const context = doing && !purpose ? `; ${doing}` : '';
  // The namespace the request was for: with the server, which cluster and namespace the command chose.
  const namespace = kube ? /\/namespaces\/([^/?]+)/.exec(path)?.[1] : undefined;
  const where = namespace && !purpose.includes(`namespace ${namespace}`) ? ` in namespace ${namespace}` : '';
  return `cannot reach ${what} (${why}${context})${purpose}${where}: ${check}`;
}
