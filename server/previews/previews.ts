/**
 * Preview environments: a namespace named after the preview, made by the service (its own rights,
 * like `namespace create`), in which a pipeline deploys a branch (pipelines/runs.ts, acting with a
 * user's own token). The namespace is the record (store: labels and annotations); the pipeline's
 * record in it says how the last run went. Nothing is kept in a service pod: every answer is read
 * from the cluster again, so a replica killed mid-run loses nothing.
 *
 * Who may do what (the service's own checks; RBAC enforces the rest):
 * - personal (default): only its creator reaches it (the owner's RoleBinding is the only one);
 * - global: every user reaches it (a RoleBinding of `view` to all users: no Secrets, no exec, no
 *   writes); only admins deploy one, only its owner redeploys it, admins destroy it;
 * - the pipeline routes refuse preview namespaces: a preview's runs start only here;
 * - a name is one namespace: taken in either scope, or by any namespace, is a 409 naming why.
 *
 * Destroying runs `devtool destroy` as the preview's owner (the same credentials and stored
 * secrets that deployed it), then deletes the namespace. Whoever looks next (a request, or the
 * sweeper of every replica) moves a destroy on: starts the run if it never started, deletes the
 * namespace once the run has ended.
 */
import type { PreviewBody, PreviewDeployBody, PreviewScopeValue } from '../../api/routes.ts';
import { PERSONAL_SUFFIX } from '../../api/routes.ts';
import { ApiError } from '../errors.ts';
import type { ActingUser } from '../pipelines/acting-user.ts';
import type { PipelineCluster, RunRecord } from '../pipelines/cluster.ts';
import { deploy as deployRun, destroy as destroyRun, refresh } from '../pipelines/runs.ts';
import { ConflictError, type NamespaceRecord, type Store, type UserRecord } from '../store/store.ts';
import type { NamespaceWorkloads } from '../workloads/kube-workloads.ts';

/** What previews need of the cluster besides pipeline runs. */
export interface PreviewCluster extends PipelineCluster {
  /** The hosts of the Ingresses of a namespace: its public endpoints. */
  ingressHosts(namespace: string): Promise<string[]>;
  /** The shared sleep and wake of a namespace's workloads (workloads/kube-workloads.ts). */
  scaleWorkloads: NamespaceWorkloads['scaleWorkloads'];
}

export interface PreviewDeps {
  store: Pick<Store, 'getNamespace' | 'namespaceExists' | 'createNamespace' | 'deleteNamespace' | 'listPreviews' | 'updatePreview'>;
  /** The cluster as `user` sees it (a token of the user's ServiceAccount), and what a run needs. */
  actAs(user: string): Promise<ActingUser<PreviewCluster>>;
  now(): Date;
}

/** How long a deploy in a namespace made a moment ago retries Kubernetes' refusal (RBAC caches the new RoleBinding). */
const FRESH_RBAC_MS = 10_000;

type Found = Awaited<ReturnType<typeof refresh>>;
const running = (r: RunRecord) => r.status === 'progressing' || r.status === 'destroying';
const other = (scope: PreviewScopeValue) => (scope === 'global' ? 'personal' : 'global');

/** The pipeline's name in a preview's namespace: the repository's name (endpoints are https://<it>-<preview>.<domain>). */
export function pipelineNameOf(repository: string): string {
  const last =
    new URL(repository).pathname
      .replace(/\/+$/, '')
      .split('/')
      .pop()
      ?.replace(/\.git$/, '') ?? '';
  const name = last
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+/, '')
    .slice(0, 40)
    .replace(/-+$/, '');
  return name || 'app';
}

function view(p: NamespaceRecord, found: Found, status: PreviewBody['status'], message?: string): PreviewBody {
  const info = p.preview!;
  const run = found?.record;
  return {
    name: p.name,
    scope: info.scope,
    owner: p.owner,
    status,
    pipeline: info.pipeline,
    ...(run?.repository ? { repository: run.repository } : {}),
    // Deployed without a branch, it shows the default branch the run cloned.
    ...((run?.branch ?? run?.clonedBranch) ? { branch: run.branch ?? run.clonedBranch } : {}),
    ...(run?.commit ? { commit: run.commit } : {}),
    ...(run?.file ? { file: run.file } : {}),
    ...(info.sourceUrl ? { sourceUrl: info.sourceUrl } : {}),
    ...(p.createdAt ? { createdAt: p.createdAt } : {}),
    deployedAt: info.deployedAt,
    ...(run && running(run) ? { job: run.job } : {}),
    ...(message ? { message } : {}),
  };
}

/** May `user` see this preview? Its owner, and everybody for a global one. */
const reaches = (p: NamespaceRecord, user: UserRecord) => p.owner === user.name || p.preview?.scope === 'global';

export async function previewOf(deps: PreviewDeps, name: string, user: UserRecord): Promise<NamespaceRecord> {
  const p = await deps.store.getNamespace(name);
  // Another user's personal preview is not there for this user: the same answer as none.
  if (!p?.preview || !reaches(p, user)) throw new ApiError(404, `no preview environment ${name}`);
  return p;
}

/** Deletes the preview's namespace once nothing of its destroy is left to run. */
async function finishDestroy(deps: PreviewDeps, p: NamespaceRecord, found: Found): Promise<PreviewBody> {
  await deps.store.deleteNamespace(p.name);
  return view(p, found, 'destroying', p.preview?.destroyReason);
}

/** The preview's status, read from its namespace and its pipeline; a destroy whose run has ended deletes the namespace. */
export async function settle(deps: PreviewDeps, cluster: PipelineCluster, p: NamespaceRecord): Promise<PreviewBody> {
  const info = p.preview!;
  if (p.status === 'Terminating') return view(p, undefined, 'destroying', info.destroyReason);
  const found = await refresh(cluster, p.name, info.pipeline, deps.now());
  const run = found?.record;
  if (info.destroyRequestedAt || run?.action === 'destroy') {
    // The namespace goes only on the service's own word: the annotation it wrote when a destroy
    // was asked for (users cannot write a Namespace), and its own record of the run.
    if (info.destroyRequestedAt && (!run || run.status === 'destroyed')) return await finishDestroy(deps, p, found);
    if (run?.action === 'destroy' && run.status === 'error') {
      return view(
        p,
        found,
        'error',
        `destroy failed: ${run.message ?? 'see its log'}; devtool preview destroy ${p.name} tries again, devtool namespace delete ${p.name} deletes ` +
          `the namespace without running destroy`,
      );
    }
    return view(p, found, 'destroying', info.destroyReason);
  }
  if (!run) return view(p, found, 'error', `no deploy was recorded: run devtool preview deploy ${p.name} again`);
  if (info.sleepingSince && run.status === 'deployed') return view(p, found, 'sleeping', `asleep since ${info.sleepingSince}: devtool preview wake ${p.name}`);
  return view(p, found, run.status === 'destroyed' ? 'destroying' : run.status, run.message);
}

/** Runs `fn`, again while Kubernetes refuses for a moment after a namespace was made (RBAC caches). */
async function withFreshRbac<T>(fresh: boolean, fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + (fresh ? FRESH_RBAC_MS : 0);
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof ApiError && err.statusCode === 403) || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/** A preview's deploy; without a repository, a redeploy with its last deploy's parameters (pipelines/runs.ts reuseParams). */
type DeployAsked = Omit<PreviewDeployBody, 'repository'> & { repository?: string };

/** Only admins deploy a global preview. */
const mayDeployScope = (user: UserRecord, scope: PreviewScopeValue) => scope !== 'global' || user.admin;

/** Whether `user` may redeploy the preview: only its owner, and a global one only while an admin (deployPreview's rule). */
export function mayRedeployPreview(user: UserRecord, p: NamespaceRecord): boolean {
  return p.preview !== undefined && p.owner === user.name && mayDeployScope(user, p.preview.scope);
}

export async function deployPreview(deps: PreviewDeps, user: UserRecord, req: DeployAsked): Promise<PreviewBody> {
  const { name, scope } = req;
  if (!mayDeployScope(user, scope)) {
    throw new ApiError(403, `only admins can deploy a global preview environment: deploy ${name} with --scope personal, or ask an admin`);
  }
  if (name.endsWith(PERSONAL_SUFFIX))
    throw new ApiError(400, `preview environment ${name}: names ending in ${PERSONAL_SUFFIX} are reserved for personal namespaces`);
  const now = deps.now().toISOString();
  let p = await deps.store.getNamespace(name);
  let fresh = false;
  if (!p) {
    if (!req.repository) throw new ApiError(404, `no preview environment ${name}`);
    if (await deps.store.namespaceExists(name)) throw new ApiError(409, `preview environment ${name}: the name is taken by a namespace: choose another name`);
    const preview = { scope, pipeline: pipelineNameOf(req.repository), deployedAt: now, ...(req.sourceUrl ? { sourceUrl: req.sourceUrl } : {}) };
    try {
      p = await deps.store.createNamespace({ name, owner: user.name, personal: false, preview });
    } catch (err) {
      if (err instanceof ConflictError) throw new ApiError(409, `preview environment ${name}: the name was taken just now: choose another name`);
      throw err;
    }
    fresh = true;
  } else {
    const taken = (why: string) => new ApiError(409, `preview environment ${name}: the name is taken by ${why}: choose another name`);
    if (!p.preview) throw taken('a namespace');
    if (p.preview.scope !== scope) {
      throw new ApiError(
        409,
        `preview environment ${name} exists as a ${p.preview.scope} preview: destroy it first, or deploy it with --scope ${other(scope)}`,
      );
    }
    if (scope === 'personal' && p.owner !== user.name) throw taken("another user's personal preview");
    // A run acts as the user who asked, and a later destroy runs what the owner deployed as the
    // owner: another admin's parameters never run with the owner's credentials.
    if (p.owner !== user.name) {
      throw new ApiError(
        403,
        `preview environment ${name} belongs to ${p.owner}: only ${p.owner} redeploys it (destroy it and deploy it again to take it over)`,
      );
    }
    if (p.status === 'Terminating' || p.preview.destroyRequestedAt) {
      throw new ApiError(409, `preview environment ${name} is being destroyed: deploy it again once devtool preview list no longer shows it`);
    }
  }

  let run: Awaited<ReturnType<typeof deployRun>>;
  try {
    const { cluster, settings } = await deps.actAs(user.name);
    run = await withFreshRbac(fresh, () =>
      deployRun(cluster, settings, {
        namespace: name,
        name: p.preview!.pipeline,
        ...(req.repository ? { repository: req.repository } : { reuseParams: true }),
        ...(req.branch ? { branch: req.branch } : {}),
        ...(req.file ? { file: req.file } : {}),
        variables: req.variables,
        timeoutSeconds: req.timeoutSeconds,
        skipIfExists: false,
      }),
    );
  } catch (err) {
    // Nothing half-done: a preview whose first run could not start is not left behind.
    if (fresh) await deps.store.deleteNamespace(name).catch(() => undefined);
    if (err instanceof ApiError && err.statusCode === 409) {
      throw new ApiError(409, `preview environment ${name} is being deployed: wait until its run ends (devtool preview deploy --wait follows one)`);
    }
    throw err;
  }
  // A redeploy applies the workloads' replicas again: a sleeping preview wakes up.
  if (!fresh) await deps.store.updatePreview(name, { deployedAt: now, sleepingSince: null, ...(req.sourceUrl ? { sourceUrl: req.sourceUrl } : {}) });
  const latest = (await deps.store.getNamespace(name)) ?? p;
  return view(latest, { record: { ...run, runId: '' }, version: '' }, 'progressing');
}

/**
 * Redeploys a preview with what its last deploy used: its repository, branch, file and variables
 * (the dashboard's Redeploy). The same rules and refusals as deployPreview.
 */
export async function redeployPreview(deps: PreviewDeps, user: UserRecord, name: string, timeoutSeconds: number): Promise<PreviewBody> {
  const p = await previewOf(deps, name, user);
  return await deployPreview(deps, user, { name, scope: p.preview!.scope, variables: [], timeoutSeconds });
}

export async function getPreview(deps: PreviewDeps, user: UserRecord, name: string): Promise<PreviewBody> {
  const p = await previewOf(deps, name, user);
  const { cluster } = await deps.actAs(user.name);
  return await settle(deps, cluster, p);
}

/** The caller's previews and the global ones, each with its status. */
export async function listPreviews(deps: PreviewDeps, user: UserRecord): Promise<PreviewBody[]> {
  const mine = (await deps.store.listPreviews()).filter((p) => reaches(p, user));
  if (mine.length === 0) return [];
  const { cluster } = await deps.actAs(user.name);
  return await Promise.all(mine.map((p) => settle(deps, cluster, p)));
}

export async function previewEndpoints(deps: PreviewDeps, user: UserRecord, name: string): Promise<string[]> {
  const p = await previewOf(deps, name, user);
  const { cluster } = await deps.actAs(user.name);
  return (await cluster.ingressHosts(p.name)).map((h) => `https://${h}`).sort();
}

/**
 * Destroys a preview: personal ones by their owner (or an admin), global ones by admins only. The
 * destroy run acts as the owner: it undoes what the owner's deploy did, with the same rights.
 */
/** Whether `user` may destroy the preview: a global one only an admin, a personal one its owner or an admin. */
export function mayDestroyPreview(user: UserRecord, p: NamespaceRecord): boolean {
  return p.preview?.scope === 'global' ? user.admin : p.owner === user.name || user.admin;
}

export async function destroyPreview(deps: PreviewDeps, user: UserRecord, name: string, timeoutSeconds: number): Promise<PreviewBody> {
  const p = await deps.store.getNamespace(name);
  if (!p?.preview || (!reaches(p, user) && !user.admin)) throw new ApiError(404, `no preview environment ${name}`);
  if (!mayDestroyPreview(user, p)) throw new ApiError(403, `only admins can destroy the global preview environment ${name}`);
  if (p.status === 'Terminating') return view(p, undefined, 'destroying');
  if (!p.preview.destroyRequestedAt) {
    await deps.store.updatePreview(name, { destroyRequestedAt: deps.now().toISOString() });
    p.preview.destroyRequestedAt = deps.now().toISOString();
  }
  return await advanceDestroy(deps, p, { timeoutSeconds, retryFailed: true });
}

/**
 * Moves a destroy on: starts its run (stopping a deploy still running), or deletes the namespace
 * once the run has ended. `retryFailed`: a destroy run that failed starts again (a user asked);
 * the sweeper leaves it for the user to see.
 */
export async function advanceDestroy(deps: PreviewDeps, p: NamespaceRecord, opts: { timeoutSeconds: number; retryFailed: boolean }): Promise<PreviewBody> {
  const info = p.preview!;
  const { cluster, settings } = await deps.actAs(p.owner);
  const found = await refresh(cluster, p.name, info.pipeline, deps.now());
  if (!found || found.record.status === 'destroyed') return await finishDestroy(deps, p, found);
  const run = found.record;
  if (run.action === 'destroy' && (run.status === 'destroying' || (run.status === 'error' && !opts.retryFailed))) return await settle(deps, cluster, p);
  if (run.action === 'deploy' && running(run)) {
    // Destroying wins over a deploy still running: its Job is stopped and its record says why.
    await cluster.putRecord(
      { ...run, status: 'error', finishedAt: deps.now().toISOString(), message: 'stopped: the preview environment is being destroyed' },
      found.version,
      {},
    );
    await cluster.deleteJob(p.name, run.job);
  }
  const started = await destroyRun(cluster, settings, p.name, info.pipeline, { volumes: true, timeoutSeconds: opts.timeoutSeconds });
  return view(p, { record: { ...started, runId: '' }, version: '' }, 'destroying', info.destroyReason);
}
