/**
 * What `doctor` collects from the cluster for one dev container: the agent's logs
 * (`$DEVTOOL_STATE/logs/*.log*`: Syncthing, the SSH server, the supervisor, with their rotated
 * files), the container's own output (`kubectl logs`, also of the previous run after a crash),
 * the dev pod's state and recent events, and the agent configuration's secrets (to redact them).
 *
 * The log files are read with a Kubernetes exec of `sh`/`cat`, not through the agent's SSH
 * server: doctor is run when something is wrong, and the SSH server, the tunnel or the local keys
 * are among what may be. An exec needs only the API server and a shell in the image, which a dev
 * container has anyway (`up` opens one). `tar` is not used: many images lack it.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { isNotFound, withTimeout, type KubeClient } from '../kube/client.ts';
import { describeKubeError } from '../kube/config.ts';
import { execCapture } from '../kube/exec.ts';
import { newestFirst } from '../kube/workloads.ts';
import { AGENT_CONFIG_FILE, AGENT_STATE_DIR, devContainerName } from '../dev/mirror.ts';
import { DEV_LABEL, DEV_POD_LABEL, FOLDER_ANNOTATION } from '../dev/names.ts';
import { secretValuesIn } from '../log/redact.ts';

/** The agent rotates at 5 MiB; anything bigger is cut (and said so). */
const MAX_FILE_BYTES = 16 * 1024 * 1024;
const API_TIMEOUT_MS = 15_000;
const EXEC_TIMEOUT_MS = 60_000;

export interface CollectedFile {
  /** Path inside the zip. */
  path: string;
  text: string;
}

export interface RemoteCollection {
  files: CollectedFile[];
  /** What could not be collected, and why: one line each. */
  notes: string[];
  /** Values from the agent configuration (SSH host key, Syncthing API key and password) to redact. */
  secrets: string[];
  /** For the metadata file. */
  state: 'active' | 'not active' | 'active from another folder' | 'unknown';
  pod?: string;
}

export async function collectRemote(client: KubeClient, devName: string, folder: string): Promise<RemoteCollection> {
  const out: RemoteCollection = { files: [], notes: [], secrets: [], state: 'unknown' };
  const dir = `remote/${devName}`;
  const api = <T>(call: Promise<T>, what: string) => withTimeout(call, API_TIMEOUT_MS, what);

  const mirrors = (
    await api(client.apps.listNamespacedDeployment({ namespace: client.namespace, labelSelector: `${DEV_LABEL}=${devName}` }), 'listing dev containers')
  ).items;
  const mirror = mirrors.find((d) => d.metadata?.annotations?.[FOLDER_ANNOTATION] === folder);
  if (!mirror) {
    out.state = mirrors.length > 0 ? 'active from another folder' : 'not active';
    out.notes.push(
      `${devName}: no remote logs: ${
        mirrors.length > 0 ? 'its dev container was activated from another folder or machine' : `no dev container is active in namespace ${client.namespace}`
      }`,
    );
    return out;
  }
  out.state = 'active';
  const name = mirror.metadata!.name!;

  try {
    const secret = await api(client.core.readNamespacedSecret({ name, namespace: client.namespace }), 'reading the agent Secret');
    const agentConfig = secret.data?.[AGENT_CONFIG_FILE];
    if (agentConfig) out.secrets.push(...secretValuesIn(JSON.parse(Buffer.from(agentConfig, 'base64').toString('utf8'))));
  } catch (err) {
    // Without it, the patterns still apply; say so, since the configuration's values are then not known.
    out.notes.push(`${devName}: cannot read Secret ${name} (its values are redacted by pattern only): ${describeKubeError(err)}`);
  }

  const pods = (await api(client.core.listNamespacedPod({ namespace: client.namespace, labelSelector: `${DEV_POD_LABEL}=${devName}` }), 'listing dev pods'))
    .items;
  const byAge = newestFirst(pods);
  const pod = byAge.find((p) => !p.metadata?.deletionTimestamp) ?? byAge[0];
  if (!pod) {
    out.notes.push(`${devName}: no remote logs: deployment ${name} has no pod`);
    out.files.push({
      path: `${dir}/pod.json`,
      text: JSON.stringify({ deployment: name, pod: null, events: await events(client, 'Deployment', name) }, null, 2),
    });
    return out;
  }
  const podName = pod.metadata!.name!;
  out.pod = podName;
  const container = devContainerName(pod);
  out.files.push({
    path: `${dir}/pod.json`,
    text: JSON.stringify(
      { deployment: name, ...podState(pod), events: [...(await events(client, 'Pod', podName)), ...(await events(client, 'Deployment', name))] },
      null,
      2,
    ),
  });

  const status = pod.status?.containerStatuses?.find((c) => c.name === container);
  for (const previous of status && status.restartCount > 0 ? [false, true] : [false]) {
    try {
      const text = await api(
        client.core.readNamespacedPodLog({ name: podName, namespace: client.namespace, container, previous, limitBytes: 1024 * 1024 }),
        'reading the container log',
      );
      out.files.push({ path: `${dir}/container${previous ? '.previous' : ''}.log`, text: String(text) });
    } catch (err) {
      out.notes.push(`${devName}: no ${previous ? 'previous ' : ''}output of container ${container}: ${describeKubeError(err)}`);
    }
  }

  if (!status?.state?.running) {
    out.notes.push(`${devName}: no agent logs: container ${container} of pod ${podName} is not running (${describeState(status)})`);
    return out;
  }
  const logDir = `${AGENT_STATE_DIR}/logs`;
  const list = await execCapture(
    client,
    podName,
    container,
    ['sh', '-c', 'for f in "$1"/*.log*; do [ -f "$f" ] && printf "%s\\n" "$f"; done; exit 0', 'sh', logDir],
    { timeoutMs: EXEC_TIMEOUT_MS, maxBytes: 64 * 1024 },
  );
  if (list.code !== 0) {
    out.notes.push(
      `${devName}: no agent logs: cannot list ${logDir} in pod ${podName} ` +
        `(${list.message ?? list.stderr.trim()}${list.message?.includes('executable file not found') ? '; the image has no sh' : ''})`,
    );
    return out;
  }
  const files = list.stdout.toString('utf8').split('\n').filter(Boolean);
  if (files.length === 0) out.notes.push(`${devName}: ${logDir} in pod ${podName} has no log files yet`);
  for (const file of files) {
    const got = await execCapture(client, podName, container, ['cat', file], { timeoutMs: EXEC_TIMEOUT_MS, maxBytes: MAX_FILE_BYTES });
    if (got.code !== 0) {
      out.notes.push(`${devName}: cannot read ${file} in pod ${podName}: ${got.message ?? got.stderr.trim()}`);
      continue;
    }
    if (got.truncated) out.notes.push(`${devName}: ${file} is bigger than ${MAX_FILE_BYTES / 1024 / 1024} MiB: only its beginning is included`);
    out.files.push({ path: `${dir}/${file.slice(file.lastIndexOf('/') + 1)}`, text: got.stdout.toString('utf8') });
  }
  return out;
}

/** The pod's state as `kubectl describe` would summarize it; no spec (it holds env values). */
function podState(pod: V1Pod): Record<string, unknown> {
  const containers = [...(pod.status?.initContainerStatuses ?? []).map((c) => ({ ...c, init: true })), ...(pod.status?.containerStatuses ?? [])];
  return {
    pod: pod.metadata?.name,
    node: pod.spec?.nodeName,
    phase: pod.status?.phase,
    reason: pod.status?.reason,
    message: pod.status?.message,
    conditions: pod.status?.conditions?.map((c) => ({ type: c.type, status: c.status, reason: c.reason, message: c.message })),
    containers: containers.map((c) => ({
      name: c.name,
      init: 'init' in c || undefined,
      image: c.image,
      ready: c.ready,
      restartCount: c.restartCount,
      state: c.state,
      lastState: c.lastState,
    })),
  };
}

async function events(client: KubeClient, kind: string, name: string): Promise<Record<string, unknown>[]> {
  try {
    const list = await withTimeout(
      client.core.listNamespacedEvent({ namespace: client.namespace, fieldSelector: `involvedObject.kind=${kind},involvedObject.name=${name}` }),
      API_TIMEOUT_MS,
      'listing events',
    );
    return list.items.map((e) => ({
      object: `${kind}/${name}`,
      type: e.type,
      reason: e.reason,
      message: e.message,
      count: e.count,
      last: e.lastTimestamp ?? e.eventTime,
    }));
  } catch (err) {
    if (isNotFound(err)) return [];
    return [{ object: `${kind}/${name}`, error: describeKubeError(err) }];
  }
}

function describeState(status: { state?: { waiting?: { reason?: string }; terminated?: { reason?: string } } } | undefined): string {
  if (!status) return 'no status yet';
  return status.state?.waiting?.reason ?? status.state?.terminated?.reason ?? 'not started';
}
