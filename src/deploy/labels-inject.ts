/**
 * What the labelling proxy changes in a request to the API server, as pure functions: which
 * requests carry an object devtool must label, and the labelled body. Objects get the environment
 * label on metadata.labels, and pod templates too (Deployments, StatefulSets, DaemonSets, Jobs,
 * ReplicaSets; CronJobs' job template), so pods and their logs are found the same way.
 */
import { ENVIRONMENT_LABEL } from '../kube/labels.ts';

/** Writes of a namespaced object: /api/v1/namespaces/NS/RESOURCE[/NAME] or /apis/GROUP/VERSION/namespaces/NS/RESOURCE[/NAME]. */
const NAMESPACED_OBJECT = /^\/(?:api\/v1|apis\/[^/]+\/[^/]+)\/namespaces\/[^/]+\/[^/]+(?:\/[^/]+)?$/;

/** protobuf: kubectl and other client-go programs send built-in kinds so (labels-protobuf.ts). */
export type BodyFormat = 'json' | 'yaml' | 'protobuf';

/**
 * The format of a body to label, or undefined when the request passes unchanged: reads, deletes,
 * subresources (status, scale, exec...), cluster-scoped objects, and JSON patches (a list of
 * operations, which cannot add a label to a map that may not exist; a JSON patch cannot create an
 * object either, so what it changes was labelled when it was created). Every way of creating an
 * object is covered: POST (create), PUT (create on update), and PATCH with an apply patch
 * (server-side apply creates) or a merge patch (kubectl apply's updates).
 */
export function labelledBodyFormat(method: string, url: string, contentType: string | undefined): BodyFormat | undefined {
  if (!isNamespacedWrite(method, url)) return undefined;
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/json' || type === 'application/merge-patch+json' || type === 'application/strategic-merge-patch+json') return 'json';
  // Server-side apply sends YAML, and JSON is YAML: kubectl --server-side sends JSON under this type.
  if (type === 'application/apply-patch+yaml') return 'yaml';
  // Protobuf is a serialization of whole objects: never a patch.
  if (type === 'application/vnd.kubernetes.protobuf' && method !== 'PATCH') return 'protobuf';
  return undefined;
}

/** A create, update or patch of a namespaced object (not of a subresource). */
export function isNamespacedWrite(method: string, url: string): boolean {
  return (method === 'POST' || method === 'PUT' || method === 'PATCH') && NAMESPACED_OBJECT.test(url.split('?')[0]!);
}

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function child(parent: Obj, key: string): Obj {
  const existing = parent[key];
  if (isObj(existing)) return existing;
  const made: Obj = {};
  parent[key] = made;
  return made;
}

function labelMeta(holder: Obj, environment: string): void {
  const labels = child(child(holder, 'metadata'), 'labels');
  labels[ENVIRONMENT_LABEL] = environment;
}

/**
 * Adds the environment label to an object (or to every item of a List) in place; returns whether
 * the body was an object it could label. Pod templates are labelled only where one is written:
 * a patch that does not touch the template must not create an empty one.
 */
export function injectEnvironmentLabel(body: unknown, environment: string): boolean {
  if (!isObj(body)) return false;
  if (Array.isArray(body['items']) && typeof body['kind'] === 'string' && body['kind'].endsWith('List')) {
    for (const item of body['items']) injectEnvironmentLabel(item, environment);
    return true;
  }
  labelMeta(body, environment);
  const spec = body['spec'];
  if (isObj(spec)) {
    if (isObj(spec['template'])) labelMeta(spec['template'], environment);
    const jobTemplate = spec['jobTemplate'];
    if (isObj(jobTemplate)) {
      labelMeta(jobTemplate, environment);
      const jobSpec = jobTemplate['spec'];
      if (isObj(jobSpec) && isObj(jobSpec['template'])) labelMeta(jobSpec['template'], environment);
    }
  }
  return true;
}

/**
 * The labelled body as text, or undefined when it cannot be read (it is then forwarded as sent,
 * and the API server reports what is wrong with it). YAML bodies are parsed by the caller-supplied
 * parser, so this module stays free of the yaml package.
 */
export function labelBody(text: string, format: BodyFormat, environment: string, parseYaml: (text: string) => unknown): string | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    if (format !== 'yaml') return undefined;
    try {
      body = parseYaml(text);
    } catch {
      return undefined;
    }
  }
  if (!injectEnvironmentLabel(body, environment)) return undefined;
  // JSON is valid YAML, so one serialization serves both formats.
  return JSON.stringify(body);
}
