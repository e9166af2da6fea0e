/**
 * Pipeline records as Secrets in the service's own namespace, where no user has any right: a
 * pipeline `<name>` of namespace `<ns>` is the Secret `devtool-run.<ns>.<name>` (its record, JSON,
 * and the last run's log) and `devtool-run-vars.<ns>.<name>` (the deploy's `--var` values, one key
 * each). Both are owned by the pipeline's Namespace, so deleting the namespace removes them (the
 * garbage collector follows an owner that is cluster-scoped); a record left by an earlier namespace
 * of the same name (its uid differs) counts as none.
 */
import type * as k8s from '@kubernetes/client-node';
import { orUndefined, statusOf } from './kube-calls.ts';
import { LABEL_PIPELINE, variableKey } from '../pipelines/job.ts';
import { NamespaceGone, RecordConflict, type RunRecord, type RunRecords } from './store.ts';

const RECORD_KEY = 'run.json';
const LOG_KEY = 'log';
const LABEL_KIND = 'devtool.dev/kind';
const LABEL_RUN_NAMESPACE = 'devtool.dev/pipeline-namespace';
/** Pipeline names and namespace names have no dots: the name is unambiguous. */
export const recordSecretName = (namespace: string, name: string) => `devtool-run.${namespace}.${name}`;
export const variablesSecretName = (namespace: string, name: string) => `devtool-run-vars.${namespace}.${name}`;

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const unb64 = (s: string) => Buffer.from(s, 'base64').toString('utf8');

export interface KubeRunRecordsDeps {
  core: k8s.CoreV1Api;
  /** The service's namespace. */
  namespace: string;
  labels(own: Record<string, string>): Record<string, string>;
}

export class KubeRunRecords implements RunRecords {
  constructor(private readonly d: KubeRunRecordsDeps) {}

  /** The pipeline's Namespace as an owner; undefined when it does not exist. */
  private async ownerOf(namespace: string): Promise<k8s.V1OwnerReference | undefined> {
    const ns = await orUndefined(this.d.core.readNamespace({ name: namespace }));
    if (!ns?.metadata?.uid || ns.metadata.deletionTimestamp) return undefined;
    return { apiVersion: 'v1', kind: 'Namespace', name: namespace, uid: ns.metadata.uid };
  }

  private async read(name: string, namespace: string): Promise<k8s.V1Secret | undefined> {
    const s = await orUndefined(this.d.core.readNamespacedSecret({ name, namespace: this.d.namespace }));
    if (!s) return undefined;
    // A namespace deleted and made again: the earlier one's record is not this one's.
    const owner = s.metadata?.ownerReferences?.find((o) => o.kind === 'Namespace');
    const current = await this.ownerOf(namespace);
    if (!current || owner?.uid !== current.uid) return undefined;
    return s;
  }

  private meta(name: string, namespace: string, pipeline: string, kind: string, owner: k8s.V1OwnerReference, labels: Record<string, string>) {
    return {
      name,
      namespace: this.d.namespace,
      labels: { ...labels, ...this.d.labels({ [LABEL_KIND]: kind, [LABEL_RUN_NAMESPACE]: namespace, [LABEL_PIPELINE]: pipeline }) },
      ownerReferences: [owner],
    };
  }

  async getRecord(namespace: string, name: string) {
    const s = await this.read(recordSecretName(namespace, name), namespace);
    const data = s?.data ?? {};
    if (!data[RECORD_KEY]) return undefined;
    const record = JSON.parse(unb64(data[RECORD_KEY])) as RunRecord;
    if (data[LOG_KEY]) record.log = unb64(data[LOG_KEY]);
    return { record, version: s?.metadata?.resourceVersion ?? '' };
  }

  async putRecord(record: RunRecord, version: string | undefined, labels: Record<string, string>): Promise<string> {
    const name = recordSecretName(record.namespace, record.name);
    const owner = await this.ownerOf(record.namespace);
    if (!owner) throw new NamespaceGone(`namespace ${record.namespace} does not exist (or is being deleted)`);
    const { log, ...rest } = record;
    const body: k8s.V1Secret = {
      metadata: { ...this.meta(name, record.namespace, record.name, 'pipeline-run', owner, labels), ...(version ? { resourceVersion: version } : {}) },
      type: 'Opaque',
      data: { [RECORD_KEY]: b64(JSON.stringify(rest)), ...(log ? { [LOG_KEY]: b64(log) } : {}) },
    };
    try {
      if (version !== undefined)
        return (await this.d.core.replaceNamespacedSecret({ name, namespace: this.d.namespace, body })).metadata?.resourceVersion ?? '';
      try {
        return (await this.d.core.createNamespacedSecret({ namespace: this.d.namespace, body })).metadata?.resourceVersion ?? '';
      } catch (err) {
        if (statusOf(err) !== 409) throw err;
        // An earlier namespace's record not yet collected: removed, then this one is made.
        const stale = await orUndefined(this.d.core.readNamespacedSecret({ name, namespace: this.d.namespace }));
        if (stale?.metadata?.ownerReferences?.some((o) => o.uid === owner.uid)) throw err;
        await orUndefined(this.d.core.deleteNamespacedSecret({ name, namespace: this.d.namespace, body: { preconditions: { uid: stale?.metadata?.uid } } }));
        return (await this.d.core.createNamespacedSecret({ namespace: this.d.namespace, body })).metadata?.resourceVersion ?? '';
      }
    } catch (err) {
      if (statusOf(err) === 409) throw new RecordConflict(`pipeline ${record.name} changed meanwhile`);
      throw err;
    }
  }

  async listRecords(namespace: string): Promise<RunRecord[]> {
    const list = await this.d.core.listNamespacedSecret({
      namespace: this.d.namespace,
      labelSelector: `${LABEL_KIND}=pipeline-run,${LABEL_RUN_NAMESPACE}=${namespace}`,
    });
    return list.items.flatMap((s) => (s.data?.[RECORD_KEY] ? [JSON.parse(unb64(s.data[RECORD_KEY])) as RunRecord] : []));
  }

  async deleteRecord(namespace: string, name: string): Promise<void> {
    await orUndefined(this.d.core.deleteNamespacedSecret({ name: recordSecretName(namespace, name), namespace: this.d.namespace }));
  }

  async putVariables(namespace: string, name: string, variables: readonly string[], labels: Record<string, string>): Promise<void> {
    const secret = variablesSecretName(namespace, name);
    if (variables.length === 0) return this.deleteVariables(namespace, name);
    const owner = await this.ownerOf(namespace);
    if (!owner) throw new NamespaceGone(`namespace ${namespace} does not exist (or is being deleted)`);
    // data, not stringData: a replace then holds exactly these keys.
    const body: k8s.V1Secret = {
      metadata: this.meta(secret, namespace, name, 'pipeline-variables', owner, labels),
      type: 'Opaque',
      data: Object.fromEntries(variables.map((v, i) => [variableKey(i), b64(v)])),
    };
    try {
      await this.d.core.createNamespacedSecret({ namespace: this.d.namespace, body });
    } catch (err) {
      if (statusOf(err) !== 409) throw err;
      await this.d.core.replaceNamespacedSecret({ name: secret, namespace: this.d.namespace, body });
    }
  }

  async getVariables(namespace: string, name: string): Promise<string[]> {
    const data = (await this.read(variablesSecretName(namespace, name), namespace))?.data ?? {};
    // variableKey pads to 3 digits (at most 100 variables): the keys sort in their order.
    return Object.keys(data)
      .filter((k) => /^var-\d+$/.test(k))
      .sort()
      .map((k) => unb64(data[k]!));
  }

  async deleteVariables(namespace: string, name: string): Promise<void> {
    await orUndefined(this.d.core.deleteNamespacedSecret({ name: variablesSecretName(namespace, name), namespace: this.d.namespace }));
  }
}
