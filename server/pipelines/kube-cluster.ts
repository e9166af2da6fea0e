/**
 * RunJobs on Kubernetes (client-node), acting with a user's own token: every call is authorized by
 * the user's RoleBindings, never by the service's rights.
 */
import { PassThrough, type Writable } from 'node:stream';
import type * as k8s from '@kubernetes/client-node';
import { kubeErrorLine, orUndefined, statusOf } from '../store/kubernetes.ts';
import { ClusterRefusal, type JobState, type PipelineAccess, type RunJobs } from './cluster.ts';

/** A refusal or a missing namespace as the user's one line; anything else as it is. */
function refusal(err: unknown, what: string): unknown {
  const code = statusOf(err);
  if (code === 403) return new ClusterRefusal(403, `${what}: you have no rights there (${kubeErrorLine(err) ?? 'Kubernetes refused'})`);
  if (code === 404 && /namespaces? "?[^"]*"? not found/i.test(String((err as { body?: unknown }).body))) {
    return new ClusterRefusal(404, `${what}: the namespace does not exist`);
  }
  return err;
}

/** The service's view of the API server (in a pod: its own; else KUBECONFIG's), with `token` as the only credential. */
export async function userKubeConfig(token: string): Promise<k8s.KubeConfig> {
  const mod = await import('@kubernetes/client-node');
  const own = new mod.KubeConfig();
  own.loadFromDefault();
  const cluster = own.getCurrentCluster();
  if (!cluster) throw new Error('no Kubernetes cluster in the service credentials');
  const kc = new mod.KubeConfig();
  kc.loadFromOptions({
    clusters: [cluster],
    users: [{ name: 'user', token }],
    contexts: [{ name: 'user', cluster: cluster.name, user: 'user' }],
    currentContext: 'user',
  });
  return kc;
}

export async function kubeRunJobs(kc: k8s.KubeConfig): Promise<RunJobs> {
  const mod = await import('@kubernetes/client-node');
  const core = kc.makeApiClient(mod.CoreV1Api);
  const batch = kc.makeApiClient(mod.BatchV1Api);
  const authorization = kc.makeApiClient(mod.AuthorizationV1Api);
  const logs = new mod.Log(kc);

  /** Whether the user may do this in the namespace (a SelfSubjectAccessReview: the user's own question, no right needed). */
  const may = async (namespace: string, verb: string, group: string, resource: string) => {
    const review = await authorization.createSelfSubjectAccessReview({
      body: { spec: { resourceAttributes: { namespace, verb, group, resource } } },
    });
    return review.status?.allowed === true;
  };

  /** The runner pod of a Job: the newest one. */
  const podOf = async (namespace: string, job: string) => {
    const pods = await core.listNamespacedPod({ namespace, labelSelector: `job-name=${job}` });
    return pods.items.sort((a, b) => String(b.metadata?.creationTimestamp).localeCompare(String(a.metadata?.creationTimestamp)))[0];
  };
  const readLog = async (namespace: string, pod: string, opts: { limitBytes?: number; tailLines?: number }) => {
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (c: Buffer) => chunks.push(c));
    const done = new Promise<void>((resolve) => {
      out.on('end', resolve);
      out.on('close', resolve);
    });
    await logs.log(namespace, pod, 'runner', out, { follow: false, ...opts });
    await done;
    return Buffer.concat(chunks).toString('utf8');
  };

  async function jobState(namespace: string, job: string): Promise<JobState> {
    const j = await orUndefined(batch.readNamespacedJob({ name: job, namespace }));
    if (!j) return { state: 'missing' };
    for (const c of j.status?.conditions ?? []) {
      if (c.status !== 'True') continue;
      if (c.type === 'Complete') return { state: 'succeeded' };
      if (c.type === 'Failed') return { state: 'failed', reason: c.reason ?? 'Failed', message: c.message ?? '' };
    }
    return { state: 'running' };
  }

  return {
    async access(namespace): Promise<PipelineAccess> {
      const [run, read] = await Promise.all([may(namespace, 'create', 'batch', 'jobs'), may(namespace, 'get', '', 'pods')]);
      if (run) return 'run';
      if (read) return 'read';
      // Refused or absent: the user cannot tell which of another user's namespaces exist.
      return 'none';
    },
    async createRun(job, secrets) {
      const namespace = job.metadata!.namespace!;
      let created: k8s.V1Job;
      try {
        created = await batch.createNamespacedJob({ namespace, body: job });
      } catch (err) {
        throw refusal(err, `pipeline Job in namespace ${namespace}`);
      }
      const owner: k8s.V1OwnerReference = { apiVersion: 'batch/v1', kind: 'Job', name: created.metadata!.name!, uid: created.metadata!.uid!, controller: true };
      for (const s of secrets) {
        await core.createNamespacedSecret({ namespace, body: { ...s, metadata: { ...s.metadata, ownerReferences: [owner] } } });
      }
    },
    jobState,
    async deleteJob(namespace, job) {
      await orUndefined(batch.deleteNamespacedJob({ name: job, namespace, propagationPolicy: 'Background' }));
    },
    async logOf(namespace, job, headBytes, tailBytes) {
      const pod = await podOf(namespace, job);
      if (!pod?.metadata?.name) return undefined;
      try {
        const head = await readLog(namespace, pod.metadata.name, { limitBytes: headBytes });
        const tail = await readLog(namespace, pod.metadata.name, { tailLines: 2000 });
        return { head, tail: Buffer.byteLength(tail) > tailBytes ? Buffer.from(tail).subarray(-tailBytes).toString('utf8') : tail };
      } catch {
        return undefined; // a pod that never started has no log
      }
    },
    async followLog(namespace, job, out: Writable, signal) {
      // Until the runner container has started (image pulled, Secrets mounted) there is no log to follow.
      for (;;) {
        if (signal.aborted) return false;
        const pod = await podOf(namespace, job);
        const phase = pod?.status?.phase;
        const started = pod?.status?.containerStatuses?.some((c) => c.state?.running || c.state?.terminated);
        if (pod?.metadata?.name && (started || phase === 'Succeeded' || phase === 'Failed')) {
          const ended = new Promise<void>((resolve) => {
            out.on('finish', resolve);
            out.on('close', resolve);
          });
          const controller = await logs.log(namespace, pod.metadata.name, 'runner', out, { follow: true });
          signal.addEventListener('abort', () => controller.abort(), { once: true });
          await ended;
          return true;
        }
        // A Job that ended without a started runner (stopped by its deadline while pulling, deleted) has nothing to follow.
        if ((await jobState(namespace, job)).state !== 'running') return false;
        await new Promise((r) => setTimeout(r, 500));
      }
    },
  };
}
