/**
 * `deploy` of a Compose application. Everything that can be checked is checked before the cluster
 * is touched (load, translate, then a server-side dry run of every object), so bad input applies
 * nothing. Then: claims and Services, workloads in dependency order (each after its depends_on
 * conditions hold), Ingresses; objects of an earlier deploy that are gone from the file are pruned
 * (volumes kept); with --wait, every service is awaited. The environment's state is recorded in the
 * cluster at each stage.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { waitUntil } from '../base/wait.ts';
import { composeDeployImages } from '../image/compose-images.ts';
import type { HostVolumePlan } from '../compose/host-volumes.ts';
import type { BuildSetup } from '../image/select.ts';
import type { ComposeProject } from '../compose/model.ts';
import { translateCompose, type Translation } from '../compose/translate.ts';
import { DevtoolError } from '../base/errors.ts';
import { applyObject, deleteObject, listByLabel } from '../kube/apply.ts';
import { isNotFound, type KubeClient } from '../kube/client.ts';
import { describeKubeError } from '../kube/config.ts';
import { ENVIRONMENT_LABEL, environmentSelector } from '../kube/labels.ts';
import type { KubeObject } from '../kube/objects.ts';
import { namespaceLimitsApi } from '../kube/namespace-limits-api.ts';
import { checkDeployLimits } from './quota-check.ts';
import { awaitCondition, awaitReady, Deadline, rolloutReader, ServiceFailure } from './await.ts';
import type { Progress } from './progress.ts';
import { loadComposeWithSecrets, type StoredSecrets } from '../compose/stored-secrets.ts';
import { recordDeployEnd, writeEnvironment, type EnvironmentRecord } from './state.ts';

export interface ComposeDeployOptions {
  cwd: string;
  files: readonly string[];
  environment: string;
  namespace: string;
  endpointDomain?: string;
  /** The IngressClass the endpoints' Ingresses name; absent: the cluster's default class. */
  ingressClass?: string;
  env: Readonly<NodeJS.ProcessEnv>;
  /** The user's stored secrets, for `${NAME}` the shell and `.env` leave unset (asked only then). */
  storedSecrets?: StoredSecrets;
  timeoutMs: number;
  wait: boolean;
  variables: Record<string, string>;
  /**
   * Delete objects of the environment the file no longer has (default true). A manifest that also
   * runs commands turns it off: their objects carry the same label and must stay.
   */
  prune?: boolean;
  /**
   * Builds the images of services with a `build`, and bakes host volumes into images of their
   * services (image/compose-images.ts), first: those missing from the registry, or all with
   * `force` (--build). Without it, a service with a build needs an `image`, and host volumes are
   * not deployed.
   */
  builds?: { setup: BuildSetup; force: boolean };
  /** Aborted when the deploy is interrupted: the waits stop, nothing more is applied, the record says `interrupted`. */
  signal?: AbortSignal;
}

type PrepareOptions = Pick<ComposeDeployOptions, 'cwd' | 'files' | 'environment' | 'namespace' | 'endpointDomain' | 'ingressClass' | 'env' | 'storedSecrets'>;

function loadProject(opts: PrepareOptions): Promise<ComposeProject> {
  return loadComposeWithSecrets({ cwd: opts.cwd, files: opts.files, env: opts.env }, opts.storedSecrets);
}

/**
 * Translates a loaded project; pure. Throws located errors on bad input.
 * `images`: the image of each service that has one of devtool's (built, or baked with its host
 * volumes; service name -> reference); `hostVolumes`: what becomes of each host volume.
 */
export function prepareCompose(
  opts: PrepareOptions,
  project: ComposeProject,
  images?: Readonly<Record<string, string>>,
  hostVolumes?: HostVolumePlan,
): { translation: Translation; manifest: string } {
  const translation = translateCompose(project, {
    name: opts.environment,
    namespace: opts.namespace,
    ...(opts.endpointDomain ? { endpointDomain: opts.endpointDomain } : {}),
    ...(opts.ingressClass ? { ingressClass: opts.ingressClass } : {}),
    ...(images ? { images } : {}),
    ...(hostVolumes ? { hostVolumes } : {}),
  });
  return { translation, manifest: project.files.join('\n') };
}

/**
 * `deploy --dry-run`: the objects deploy would apply, with the references of the images it would
 * build and bake (content tags computed from the files), building nothing and asking no registry.
 */
export async function previewCompose(opts: PrepareOptions, setup: BuildSetup, progress: Progress): Promise<Translation> {
  const project = await loadProject(opts);
  const { images, hostVolumes } = await composeDeployImages(project, opts.environment, { force: false, setup, progress, dryRun: true });
  return prepareCompose(opts, project, images, hostVolumes).translation;
}

export async function deployCompose(client: KubeClient, opts: ComposeDeployOptions, progress: Progress, now: () => Date): Promise<Translation> {
  const project = await loadProject(opts);
  if (opts.builds) {
    // The cheap checks before the expensive builds: the translation's (a public endpoint without
    // an endpoint domain, a bad name), with stand-ins for the images to build, and one look at the
    // cluster, so one that cannot be reached is said at once.
    const early = prepareCompose(opts, project, standInImages(project)).translation;
    // And the namespace's quotas and LimitRanges (resources do not depend on the images), so a refusal costs no build.
    if (await readNamespace(client)) await checkLimits(client, opts.environment, early);
  }
  // Images first: a build that fails leaves the cluster untouched, like any bad input.
  const built = opts.builds
    ? await composeDeployImages(project, opts.environment, {
        force: opts.builds.force,
        setup: opts.builds.setup,
        progress,
        ...(opts.signal ? { signal: opts.signal } : {}),
      })
    : undefined;
  const { translation, manifest } = prepareCompose(opts, project, built?.images, built?.hostVolumes);
  for (const w of translation.warnings) progress.warn(w);
  const deadline = new Deadline(opts.timeoutMs, Date.now(), opts.signal);
  opts.signal?.throwIfAborted();

  await ensureNamespace(client, progress);
  await checkOwnership(client, opts.environment, translation.objects);
  // The namespace's quotas and LimitRanges: one line naming the service and the quota, before anything is applied.
  await checkLimits(client, opts.environment, translation);
  progress.step(`checking ${translation.objects.length} objects with the API server (dry run)`);
  await Promise.all(translation.objects.map((o) => applyObject(client, o, { dryRun: true })));

  const record: EnvironmentRecord = {
    name: opts.environment,
    status: 'progressing',
    source: 'compose',
    manifest,
    variables: opts.variables,
    output: '',
    updated: now().toISOString(),
  };
  await writeEnvironment(client, record);
  try {
    await rollOut(client, opts.environment, translation, deadline, progress);
    if (opts.prune !== false) await prune(client, opts.environment, translation.objects, progress);
    if (opts.wait) {
      // Every service is awaited at once: a deploy takes as long as its slowest service.
      const pending = new Set(translation.rollout.map((step) => step.service));
      await progress.waiting(
        () => [...pending].join(', '),
        Promise.all(
          translation.rollout.map(async (step) => {
            await awaitReady(rolloutReader(client), opts.environment, step, deadline);
            pending.delete(step.service);
            progress.done(`${step.service} ${step.kind === 'Job' ? 'completed' : 'ready'}`);
          }),
        ),
      );
    }
  } catch (err) {
    if (err instanceof ServiceFailure) {
      progress.fail(err.message);
      if (err.logTail) progress.detail(err.logTail);
    }
    await recordDeployEnd(client, record, { error: err as Error, interrupted: opts.signal?.aborted, output: progress.transcript(), now: now() });
    throw err;
  }
  await recordDeployEnd(client, record, { output: progress.transcript(), now: now() });
  return translation;
}

function checkLimits(client: KubeClient, environment: string, translation: Translation): Promise<void> {
  return checkDeployLimits(namespaceLimitsApi(client), translation, {
    environment,
    namespace: client.namespace,
    podSelector: environmentSelector(environment),
  });
}

/** An image reference for every service that has a build, standing in for the one the build will give. */
function standInImages(project: ComposeProject): Record<string, string> {
  return Object.fromEntries(project.services.filter((s) => s.build).map((s) => [s.name, `localhost/${s.name}:to-be-built`]));
}

async function rollOut(client: KubeClient, environment: string, t: Translation, deadline: Deadline, progress: Progress): Promise<void> {
  const workloads = new Map<string, KubeObject>();
  for (const o of t.objects) if (o.kind === 'Deployment' || o.kind === 'StatefulSet' || o.kind === 'Job') workloads.set(o.metadata.name, o);
  // Claims and Services first: they depend on nothing and workloads need them.
  for (const o of t.objects) {
    if (o.kind === 'PersistentVolumeClaim' || o.kind === 'Service') await applyObject(client, o);
  }
  const steps = new Map(t.rollout.map((s) => [s.service, s]));
  for (const step of t.rollout) {
    for (const dep of step.dependsOn) {
      const target = steps.get(dep.service);
      if (!target) continue;
      progress.step(`${step.service}: waiting for ${dep.service} (${dep.condition})`);
      try {
        await progress.waiting(() => `${dep.service} (${dep.condition})`, awaitCondition(rolloutReader(client), environment, target, dep.condition, deadline));
      } catch (err) {
        if (dep.required) throw err;
        progress.warn(`${step.service}: optional dependency ${dep.service} not met: ${(err as Error).message}`);
      }
    }
    const object = workloads.get(step.name);
    if (!object) continue;
    deadline.signal?.throwIfAborted();
    await replaceFinishedJob(client, object);
    await applyObject(client, object);
    progress.done(`${step.service}: ${object.kind} ${step.name} applied`);
  }
  for (const o of t.objects) if (o.kind === 'Ingress') await applyObject(client, o);
}

/**
 * A Job's pod template cannot change, and a finished Job never runs again: re-deploying a one-off
 * service (a migration) must run it again, so the previous Job is deleted first.
 */
async function replaceFinishedJob(client: KubeClient, object: KubeObject): Promise<void> {
  if (object.kind !== 'Job') return;
  try {
    await client.batch.deleteNamespacedJob({ name: object.metadata.name, namespace: client.namespace, propagationPolicy: 'Foreground' });
  } catch (err) {
    if (isNotFound(err)) return;
    throw new DevtoolError(`cannot replace Job ${object.metadata.name}: ${describeKubeError(err)}`);
  }
  const gone = async () => {
    try {
      await client.batch.readNamespacedJob({ name: object.metadata.name, namespace: client.namespace });
      return false;
    } catch (err) {
      if (isNotFound(err)) return true;
      throw err;
    }
  };
  await waitUntil(gone, {
    timeoutMs: 30_000,
    intervalMs: 250,
    timedOut: () => new DevtoolError(`the previous Job ${object.metadata.name} is still being deleted after 30s`),
  });
}

const PRUNED_KINDS = [
  { apiVersion: 'apps/v1', kind: 'Deployment', resource: 'deployments' },
  { apiVersion: 'apps/v1', kind: 'StatefulSet', resource: 'statefulsets' },
  { apiVersion: 'batch/v1', kind: 'Job', resource: 'jobs' },
  { apiVersion: 'v1', kind: 'Service', resource: 'services' },
  { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', resource: 'ingresses' },
];

/** Deletes objects of this environment that the file no longer has. Volumes are never pruned: data stays. */
async function prune(client: KubeClient, environment: string, wanted: readonly KubernetesObject[], progress: Progress): Promise<void> {
  const keep = new Set(wanted.map((o) => `${o.kind}/${o.metadata?.name}`));
  for (const found of await listByLabel(client, environmentSelector(environment), PRUNED_KINDS)) {
    const ref = `${found.kind.kind}/${found.name}`;
    if (keep.has(ref)) continue;
    await deleteObject(client, found);
    progress.step(`removed ${ref} (no longer in the Compose file)`);
  }
}

/**
 * Object names are the Compose names, so two environments (or a user's own kubectl objects) can
 * want the same name in one namespace. Never take over an object that is not this environment's.
 */
async function checkOwnership(client: KubeClient, environment: string, objects: readonly KubeObject[]): Promise<void> {
  const conflicts = await Promise.all(
    objects.map(async (o) => {
      try {
        const existing = await client.objects.read({
          apiVersion: o.apiVersion,
          kind: o.kind,
          metadata: { name: o.metadata.name, namespace: client.namespace },
        });
        const owner = existing.metadata?.labels?.[ENVIRONMENT_LABEL];
        if (owner === environment) return undefined;
        return `${o.kind}/${o.metadata.name} ${owner ? `belongs to environment "${owner}"` : 'exists and was not deployed by devtool'}`;
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw new DevtoolError(`cannot read ${o.kind}/${o.metadata.name} in namespace ${client.namespace}: ${describeKubeError(err)}`);
      }
    }),
  );
  const found = conflicts.filter((c): c is string => c !== undefined);
  if (found.length > 0) {
    throw new DevtoolError(
      `cannot deploy environment "${environment}" in namespace ${client.namespace}: ${found.join('; ')}. Deploy to another namespace ` +
        `(--namespace), or destroy the other environment first`,
    );
  }
}

export async function ensureNamespace(client: KubeClient, progress: Progress): Promise<void> {
  if (await readNamespace(client)) return;
  await client.core.createNamespace({ body: { metadata: { name: client.namespace } } });
  progress.step(`created namespace ${client.namespace}`);
}

/** Whether the client's namespace exists; a cluster that cannot be asked fails here, in one line. */
async function readNamespace(client: KubeClient): Promise<boolean> {
  try {
    await client.core.readNamespace({ name: client.namespace });
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw new DevtoolError(`cannot read namespace ${client.namespace}: ${describeKubeError(err)}`);
  }
}
