/**
 * The record of a deployed environment, kept in the cluster (a ConfigMap per environment) so it
 * survives the laptop: name, status, the manifest or Compose file deployed, variables and a
 * bounded tail of the deploy output. It carries its own label, not the environment label, so
 * pruning and destroying the environment's objects never removes the record by accident.
 * The `--var` values are not in it: they may be passwords, and whoever may read ConfigMaps of the
 * namespace may read the record. They are kept in a Secret beside it (`devtool-env-<name>-vars`,
 * for destroy's commands); the record names them only.
 */
import type { V1ConfigMap, V1Secret } from '@kubernetes/client-node';
import { ENVIRONMENT_STATE_LABEL } from '../../api/activity-labels.ts';
import { DevtoolError } from '../base/errors.ts';
import { FIELD_MANAGER, isNotFound, type KubeClient } from '../kube/client.ts';
import { describeKubeError } from '../kube/config.ts';

/** `interrupted`: the deploy was stopped (Ctrl-C, SIGTERM) part way; what it applied until then stays. */
export type EnvironmentStatus = 'progressing' | 'deployed' | 'error' | 'interrupted' | 'destroying';

export interface EnvironmentRecord {
  name: string;
  status: EnvironmentStatus;
  /** 'compose' or 'manifest'. */
  source: string;
  /** The deployed file's text. */
  manifest: string;
  variables: Record<string, string>;
  /** The last OUTPUT_TAIL_BYTES of the deploy output. */
  output: string;
  /** Why the last deploy failed, when status is error. */
  error?: string;
  updated: string;
}

export const STATE_LABEL = ENVIRONMENT_STATE_LABEL;
export const OUTPUT_TAIL_BYTES = 16 * 1024;
/** ConfigMaps hold at most 1 MiB; keep well under it whatever the manifest's size. */
const MANIFEST_MAX_BYTES = 512 * 1024;

export function stateConfigMapName(envName: string): string {
  return `devtool-env-${envName}`.slice(0, 253);
}

/** The Secret holding a deployed environment's --var values (JSON under `variables`). */
export function variablesSecretName(envName: string): string {
  return `devtool-env-${envName}-vars`;
}

export function tail(text: string, bytes = OUTPUT_TAIL_BYTES): string {
  const buf = Buffer.from(text, 'utf8');
  return buf.length <= bytes
    ? text
    : buf
        .subarray(buf.length - bytes)
        .toString('utf8')
        .replace(/^[^\n]*\n/, '');
}

export async function readEnvironment(client: KubeClient, envName: string): Promise<EnvironmentRecord | undefined> {
  try {
    const cm = await client.core.readNamespacedConfigMap({ name: stateConfigMapName(envName), namespace: client.namespace });
    const d = cm.data ?? {};
    // A record written before the values moved to the Secret still has them (rewritten without on the next write).
    const variables = d.variables ? (JSON.parse(d.variables) as Record<string, string>) : d.variableNames ? await readVariables(client, envName) : {};
    return {
      name: d.name ?? envName,
      status: (d.status as EnvironmentStatus) ?? 'error',
      source: d.source ?? '',
      manifest: d.manifest ?? '',
      variables,
      output: d.output ?? '',
      ...(d.error ? { error: d.error } : {}),
      updated: d.updated ?? '',
    };
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw new DevtoolError(`cannot read the state of environment "${envName}": ${describeKubeError(err)}`);
  }
}

export async function writeEnvironment(client: KubeClient, record: EnvironmentRecord): Promise<void> {
  const manifest = Buffer.byteLength(record.manifest) > MANIFEST_MAX_BYTES ? `(not kept: ${Buffer.byteLength(record.manifest)} bytes)` : record.manifest;
  const cm: V1ConfigMap = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: stateConfigMapName(record.name),
      namespace: client.namespace,
      labels: { [STATE_LABEL]: record.name, 'app.kubernetes.io/managed-by': 'devtool' },
    },
    data: {
      name: record.name,
      status: record.status,
      source: record.source,
      manifest,
      variableNames: Object.keys(record.variables).join(','),
      output: tail(record.output),
      ...(record.error ? { error: record.error } : {}),
      updated: record.updated,
    },
  };
  try {
    await writeVariables(client, record.name, record.variables);
    await client.objects.patch(cm, undefined, undefined, FIELD_MANAGER, true, 'application/apply-patch+yaml');
  } catch (err) {
    throw new DevtoolError(`cannot record the state of environment "${record.name}": ${describeKubeError(err)}`);
  }
}

async function readVariables(client: KubeClient, envName: string): Promise<Record<string, string>> {
  try {
    const secret = await client.core.readNamespacedSecret({ name: variablesSecretName(envName), namespace: client.namespace });
    const text = secret.data?.variables;
    return text ? (JSON.parse(Buffer.from(text, 'base64').toString('utf8')) as Record<string, string>) : {};
  } catch (err) {
    if (isNotFound(err)) return {};
    throw err;
  }
}

/** The Secret holds exactly these values; none: no Secret. */
async function writeVariables(client: KubeClient, envName: string, variables: Record<string, string>): Promise<void> {
  if (Object.keys(variables).length === 0) {
    await client.core.deleteNamespacedSecret({ name: variablesSecretName(envName), namespace: client.namespace }).catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
    });
    return;
  }
  const secret: V1Secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: variablesSecretName(envName),
      namespace: client.namespace,
      labels: { [STATE_LABEL]: envName, 'app.kubernetes.io/managed-by': 'devtool' },
    },
    type: 'Opaque',
    data: { variables: Buffer.from(JSON.stringify(variables)).toString('base64') },
  };
  await client.objects.patch(secret, undefined, undefined, FIELD_MANAGER, true, 'application/apply-patch+yaml');
}

export async function deleteEnvironment(client: KubeClient, envName: string): Promise<void> {
  try {
    await writeVariables(client, envName, {});
    await client.core.deleteNamespacedConfigMap({ name: stateConfigMapName(envName), namespace: client.namespace });
  } catch (err) {
    if (!isNotFound(err)) throw new DevtoolError(`cannot delete the state of environment "${envName}": ${describeKubeError(err)}`);
  }
}

/** The record's reason for an interrupted deploy. */
export const INTERRUPTED_REASON = 'the deploy was interrupted (Ctrl-C or SIGTERM) before it finished; what it applied until then stays';

/**
 * Records how a deploy ended: `deployed`, `interrupted`, or `error` with the error's message (best
 * effort: the deploy's own error is what the user must see, not a failure to record it). `output`
 * is the deploy's transcript.
 */
export async function recordDeployEnd(
  client: KubeClient,
  record: EnvironmentRecord,
  end: { error?: Error; interrupted?: boolean | undefined; output: string; now: Date },
): Promise<void> {
  const updated = end.now.toISOString();
  if (!end.error) return writeEnvironment(client, { ...record, status: 'deployed', output: end.output, updated });
  const [status, error] = end.interrupted ? (['interrupted', INTERRUPTED_REASON] as const) : (['error', end.error.message] as const);
  await writeEnvironment(client, { ...record, status, error, output: end.output, updated }).catch(() => undefined);
}

/**
 * After an interrupted deploy: a record still `progressing` (the deploy did not get to record its
 * end) becomes `interrupted`. Returns the record, or undefined when there is none.
 */
export async function markInterrupted(client: KubeClient, envName: string, now: Date): Promise<EnvironmentRecord | undefined> {
  const record = await readEnvironment(client, envName);
  if (record?.status !== 'progressing') return record;
  const marked: EnvironmentRecord = { ...record, status: 'interrupted', error: INTERRUPTED_REASON, updated: now.toISOString() };
  await writeEnvironment(client, marked);
  return marked;
}
