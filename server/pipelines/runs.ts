/**
 * Pipeline runs: start one (never two at once on one pipeline), bring a record up to date from its
 * Job, destroy. The service keeps no state of its own: a run's status is its Job's, read again on
 * every request and written to the record once the Job has ended (so a service pod killed during a
 * run loses nothing: the next request of any replica records the result).
 */
import { randomBytes } from 'node:crypto';
import type * as k8s from '@kubernetes/client-node';
import { PIPELINE_LOG_MAX, type PipelineDeployBody, type PipelineRunBody } from '../../api/routes.ts';
import { ApiError } from '../errors.ts';
import { statusOf } from '../store/kube-calls.ts';
import { ClusterRefusal, NamespaceGone, type PipelineAccess, type PipelineCluster, RecordConflict, type RunRecord } from './cluster.ts';
import {
  COMMIT_LINE_PREFIX,
  credentialsSecretName,
  envSecretName,
  KEY_CLUSTER_CA,
  KEY_FRONT_DOOR_CA,
  KEY_API_TOKEN,
  KEY_GIT_TOKEN,
  KEY_KUBE_TOKEN,
  LABEL_PIPELINE,
  LABEL_RUN,
  jobName,
  type RunnerJobInput,
  variableKey,
  runnerJob,
} from './job.ts';

/** Everything a run needs besides the cluster. */
export interface RunSettings {
  /** The acting user: the run uses this user's credentials and stored secrets. */
  user: string;
  runnerImage: string;
  /** PEM of the cluster's CA (the runner's kubeconfig trusts it). */
  clusterCa: string;
  /** PEM of the front door's CA (git trusts it beside the system's). */
  frontDoorCa?: string;
  /** Labels put on every object (DEVTOOL_OBJECT_LABELS). */
  labels: Record<string, string>;
  /** The service's endpoint domain, for the deploys it runs. */
  endpointDomain?: string;
  /** The service's ingress class, for the deploys it runs. */
  ingressClass?: string;
  /**
   * The service's public URL and a way to make an API token of the user for the run (scope `run`),
   * living `seconds`: the runner's devtool then works on the service context (hosted builds, the
   * service's registry, short-lived cluster credentials bound to this token).
   */
  service?: { url: string; issueApiToken(seconds: number, name: string): Promise<{ token: string; id: string }> };
  /** A token of the user's own ServiceAccount, living at least `seconds` (a run without the service's URL). */
  issueToken(seconds: number): Promise<string>;
  /** The user's stored secrets. */
  storedSecrets(): Promise<Record<string, string>>;
  now(): Date;
}

/**
 * The stored secret holding the token for a repository's host: GIT_TOKEN_ and the host in capitals,
 * every other character an underscore (github.com: GIT_TOKEN_GITHUB_COM). Per host, so a token is
 * never sent to another server.
 */
export function gitTokenSecretName(repository: string): string {
  return `GIT_TOKEN_${new URL(repository).hostname.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

/** How long a run's Job may take to appear after its record says it runs. */
export const JOB_APPEARS_MS = 60_000;

const running = (r: RunRecord) => r.status === 'progressing' || r.status === 'destroying';
const tailLines = (log: string, n: number) => log.replace(/\n$/, '').split('\n').slice(-n).join('\n');

function body(record: RunRecord, extra: Partial<PipelineRunBody> = {}): PipelineRunBody {
  const { runId: _, actor: __, apiTokenId: ___, clonedBranch: ____, ...rest } = record;
  return { ...rest, ...extra };
}

/**
 * Refuses unless the acting user may `need` pipelines in the namespace (Kubernetes RBAC, asked with
 * the user's own token): the records are the service's, so reading one is authorized here.
 */
export async function requireAccess(cluster: PipelineCluster, namespace: string, name: string, need: 'run' | 'read'): Promise<void> {
  const access: PipelineAccess = await cluster.access(namespace);
  if (access === 'run' || (need === 'read' && access === 'read')) return;
  const [what, refused] = need === 'run' ? ['run pipelines', 'creating Jobs'] : ['read pipelines', 'reading pods'];
  throw new ApiError(403, `pipeline ${name} in namespace ${namespace}: you may not ${what} there (Kubernetes refuses your account ${refused} in it)`);
}

/** A run's parameters are the user's who gave them: another user's redeploy or destroy would run them with other credentials. */
function requireActor(r: RunRecord, user: string, what: string): void {
  if (r.actor && r.actor !== user) {
    throw new ApiError(403, `pipeline ${r.name} in namespace ${r.namespace} was deployed by ${r.actor}: only ${r.actor} can ${what}`);
  }
}

/** Kubernetes' refusal as the API's answer. */
async function asApi<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    if (err instanceof ClusterRefusal) throw new ApiError(err.statusCode, err.message);
    if (err instanceof NamespaceGone) throw new ApiError(404, err.message);
    throw err;
  }
}

/**
 * The commit and the branch the runner cloned, from its commit line (`<prefix><sha> (branch <name>)`);
 * a detached HEAD names no branch.
 */
export function clonedFrom(logHead: string): { commit?: string; branch?: string } {
  const line = logHead.split('\n').find((l) => l.startsWith(COMMIT_LINE_PREFIX));
  const found = line && /^(\S+)(?: \(branch (\S+)\))?/.exec(line.slice(COMMIT_LINE_PREFIX.length));
  if (!found) return {};
  const [, commit, branch] = found;
  return { commit: commit!, ...(branch && branch !== 'HEAD' ? { branch } : {}) };
}

/**
 * The record with its Job's result: a run whose Job ended gets its status, end time, commit and the
 * tail of its log, and its Job is deleted (with the pods and Secrets, the user's token among them).
 * A successful destroy removes the record too and answers `destroyed`.
 */
export async function refresh(
  cluster: PipelineCluster,
  namespace: string,
  name: string,
  now: Date,
): Promise<{ record: RunRecord; version: string } | undefined> {
  const found = await asApi(cluster.getRecord(namespace, name));
  if (!found || !running(found.record)) return found;
  const { record, version } = found;
  const job = await cluster.jobState(namespace, record.job);
  if (job.state === 'running') return found;
  // The record is written before its Job is created (that order keeps two runs from starting): a
  // Job not there yet in the first moments is starting, not gone. Treating it as gone deleted the
  // Job another replica was creating.
  if (job.state === 'missing' && now.getTime() - Date.parse(record.startedAt) < JOB_APPEARS_MS) return found;
  const log = await cluster.logOf(namespace, record.job, 4096, PIPELINE_LOG_MAX);
  const { commit, branch: clonedBranch } = clonedFrom(log?.head ?? '');
  const done: RunRecord = {
    ...record,
    finishedAt: now.toISOString(),
    ...(commit ? { commit } : {}),
    ...(clonedBranch ? { clonedBranch } : {}),
    ...(log ? { log: log.tail } : {}),
  };
  if (job.state === 'succeeded') done.status = record.action === 'deploy' ? 'deployed' : 'destroyed';
  else {
    done.status = 'error';
    done.message =
      job.state === 'missing'
        ? `the Job ${record.job} is gone before its result was recorded`
        : job.reason === 'DeadlineExceeded'
          ? `timed out: the Job was stopped after its --timeout`
          : `the runner failed${log?.tail ? `: ${tailLines(log.tail, 1).slice(0, 300)}` : ` (${job.reason}: ${job.message})`}`;
  }
  // The run's API token goes with the run: the cluster tokens bound to it stop working at once.
  if (record.actor && record.apiTokenId) await cluster.endRunToken(record.actor, record.apiTokenId);
  if (done.status === 'destroyed') {
    await removeJob(cluster, namespace, record.job);
    // The variables before the record: a record is never left without them while it lives.
    await cluster.deleteVariables(namespace, name);
    await cluster.deleteRecord(namespace, name);
    return { record: done, version: '' };
  }
  let written: string;
  try {
    written = await cluster.putRecord(done, version, {});
  } catch (err) {
    // Another replica recorded it first: its record is as good.
    if (err instanceof RecordConflict) return await asApi(cluster.getRecord(namespace, name));
    throw err;
  }
  await removeJob(cluster, namespace, record.job);
  return { record: done, version: written };
}

/**
 * The ended run's Job goes (with its pods and credential Secrets). A reader without the right to
 * delete it (a global preview's users) leaves it to the next writer, or to its one-day TTL.
 */
async function removeJob(cluster: PipelineCluster, namespace: string, job: string): Promise<void> {
  try {
    await cluster.deleteJob(namespace, job);
  } catch (err) {
    if (!(err instanceof ClusterRefusal) && statusOf(err) !== 403) throw err;
  }
}

export async function getRun(cluster: PipelineCluster, namespace: string, name: string, now: Date): Promise<PipelineRunBody> {
  await requireAccess(cluster, namespace, name, 'read');
  const found = await refresh(cluster, namespace, name, now);
  if (!found) throw new ApiError(404, `no pipeline ${name} in namespace ${namespace}`);
  return body(found.record);
}

/** What a run is asked to do: the Job's input less what the service adds (its id, the image, labels). */
type StartInput = Omit<RunnerJobInput, 'runId' | 'image' | 'labels'>;

async function start(cluster: PipelineCluster, s: RunSettings, input: StartInput, previous: { record: RunRecord; version: string } | undefined) {
  const runId = randomBytes(3).toString('hex');
  const job = jobName(input.name, runId);
  const record: RunRecord = {
    name: input.name,
    namespace: input.namespace,
    status: input.action === 'deploy' ? 'progressing' : 'destroying',
    action: input.action,
    repository: input.repository,
    ...(input.branch ? { branch: input.branch } : {}),
    ...(input.file ? { file: input.file } : {}),
    job,
    runId,
    actor: s.user,
    startedAt: s.now().toISOString(),
  };
  // The record first: two requests at once both read "not running", only one writes (resourceVersion).
  let version: string;
  try {
    version = await asApi(cluster.putRecord(record, previous?.version, s.labels));
  } catch (err) {
    if (err instanceof RecordConflict)
      throw new ApiError(409, `pipeline ${input.name} in namespace ${input.namespace} was started by another request just now`);
    throw err;
  }
  if (previous) await cluster.deleteJob(input.namespace, previous.record.job);

  const stored = await s.storedSecrets();
  const tokenName = gitTokenSecretName(input.repository);
  const gitToken = stored[tokenName];
  // The user's stored secrets become the runner's environment (deploy's ${NAME}); git tokens do not.
  const env = Object.fromEntries(Object.entries(stored).filter(([k]) => !k.startsWith('GIT_TOKEN_')));
  // The run's credentials live until its deadline, and go when its end is recorded (refresh).
  const lifetime = Math.max(600, input.timeoutSeconds + 300);
  const api = s.service && (await s.service.issueApiToken(lifetime, `pipeline ${input.name} in ${input.namespace} (run ${runId})`));
  if (api) {
    record.apiTokenId = api.id;
    version = await asApi(cluster.putRecord(record, version, s.labels));
  }
  // With the service's URL, the runner asks it for short-lived cluster tokens with its API token.
  const kubeToken = api ? undefined : await s.issueToken(lifetime);
  const labels = { ...s.labels, [LABEL_PIPELINE]: input.name, [LABEL_RUN]: runId };
  const secret = (name: string, data: Record<string, string>): k8s.V1Secret => ({
    metadata: { name, namespace: input.namespace, labels },
    stringData: data,
  });
  const secrets = [
    secret(credentialsSecretName(input.name, runId), {
      ...(kubeToken ? { [KEY_KUBE_TOKEN]: kubeToken } : {}),
      [KEY_CLUSTER_CA]: s.clusterCa,
      ...(s.frontDoorCa ? { [KEY_FRONT_DOOR_CA]: s.frontDoorCa } : {}),
      ...(gitToken ? { [KEY_GIT_TOKEN]: gitToken } : {}),
      ...(api ? { [KEY_API_TOKEN]: api.token } : {}),
      ...Object.fromEntries(input.variables.map((v, i) => [variableKey(i), v])),
    }),
    ...(Object.keys(env).length ? [secret(envSecretName(input.name, runId), env)] : []),
  ];
  const spec = runnerJob({
    ...input,
    runId,
    image: s.runnerImage,
    labels: s.labels,
    ...(s.endpointDomain ? { endpointDomain: s.endpointDomain } : {}),
    ...(s.ingressClass ? { ingressClass: s.ingressClass } : {}),
    ...(s.service ? { serviceUrl: s.service.url } : {}),
  });
  try {
    // deploy's variables are kept for destroy (its commands may use ${NAME}), replacing earlier ones.
    if (input.action === 'deploy') await asApi(cluster.putVariables(input.namespace, input.name, input.variables, s.labels));
    await asApi(cluster.createRun(spec, secrets));
  } catch (err) {
    const failed: RunRecord = { ...record, status: 'error', finishedAt: s.now().toISOString(), message: `the run could not start: ${(err as Error).message}` };
    await cluster.putRecord(failed, version, s.labels).catch(() => undefined);
    throw err;
  }
  return body(record);
}

function refuseRunning(r: RunRecord): never {
  throw new ApiError(
    409,
    `pipeline ${r.name} in namespace ${r.namespace} is running (${r.action} since ${r.startedAt}): wait until it ends ` +
      `(devtool pipeline deploy --wait follows a run) before starting another`,
  );
}

/**
 * Starts a deploy run. `reuseParams` (Okteto's #3903): what the request leaves out comes from the
 * last deploy: its repository, branch and file, and its `--var` values when none are given.
 */
export async function deploy(cluster: PipelineCluster, s: RunSettings, req: PipelineDeployBody): Promise<PipelineRunBody> {
  await requireAccess(cluster, req.namespace, req.name, 'run');
  const previous = await refresh(cluster, req.namespace, req.name, s.now());
  if (previous && running(previous.record)) refuseRunning(previous.record);
  if (req.skipIfExists && previous?.record.status === 'deployed') return body(previous.record, { skipped: true });
  const { reuseParams, skipIfExists: _, ...asked } = req;
  let input = asked;
  if (reuseParams) {
    const last = previous?.record.status === 'destroyed' ? undefined : previous?.record;
    if (!last)
      throw new ApiError(404, `no pipeline ${req.name} in namespace ${req.namespace} to redeploy with its parameters: deploy it with --repository first`);
    requireActor(last, s.user, 'redeploy it with its parameters (deploy it with --repository)');
    input = {
      ...asked,
      repository: asked.repository ?? last.repository,
      ...((asked.branch ?? last.branch) ? { branch: asked.branch ?? last.branch } : {}),
      ...((asked.file ?? last.file) ? { file: asked.file ?? last.file } : {}),
      variables: asked.variables.length ? asked.variables : await asApi(cluster.getVariables(req.namespace, req.name)),
    };
  }
  const { repository } = input;
  if (!repository) throw new ApiError(400, "body.repository: required (or reuseParams, to redeploy with the last deploy's)");
  return await start(cluster, s, { ...input, repository, action: 'deploy', volumes: false }, previous?.record.status === 'destroyed' ? undefined : previous);
}

export async function destroy(
  cluster: PipelineCluster,
  s: RunSettings,
  namespace: string,
  name: string,
  opts: { volumes: boolean; timeoutSeconds: number },
): Promise<PipelineRunBody> {
  await requireAccess(cluster, namespace, name, 'run');
  const previous = await refresh(cluster, namespace, name, s.now());
  if (!previous || previous.record.status === 'destroyed') throw new ApiError(404, `no pipeline ${name} in namespace ${namespace}`);
  if (running(previous.record)) refuseRunning(previous.record);
  requireActor(previous.record, s.user, 'destroy it');
  const r = previous.record;
  return await start(
    cluster,
    s,
    {
      action: 'destroy',
      namespace,
      name,
      repository: r.repository,
      ...(r.branch ? { branch: r.branch } : {}),
      ...(r.file ? { file: r.file } : {}),
      // The last deploy's variables, copied into this run's Secret.
      variables: await asApi(cluster.getVariables(namespace, name)),
      volumes: opts.volumes,
      timeoutSeconds: opts.timeoutSeconds,
    },
    previous,
  );
}
