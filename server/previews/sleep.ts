/**
 * `preview sleep` and `preview wake` (Okteto's #2463): a preview nobody uses for now keeps its
 * namespace, volumes and records but no running pods. Sleeping scales its Deployments and
 * StatefulSets to zero and suspends its CronJobs, each keeping what it had in an annotation of its
 * own (server/workloads/scaling.ts, shared with namespaces); the namespace records since when
 * it sleeps. A redeploy wakes it too. The owner sleeps and wakes a personal preview; everybody may
 * wake a global one, only admins put one to sleep (as only they destroy one). The scaling acts as
 * the owner: other users only read a global preview.
 */
import type { PreviewBody } from '../../api/routes.ts';
import { ApiError } from '../errors.ts';
import type { NamespaceRecord, UserRecord } from '../store/store.ts';
import { type PreviewDeps, previewOf, settle } from './previews.ts';

/** Whether `user`, who reaches the preview, may put it to sleep: a global one only an admin. */
export function maySleepPreview(user: UserRecord, p: NamespaceRecord): boolean {
  return p.preview?.scope !== 'global' || user.admin;
}

export async function sleepPreview(deps: PreviewDeps, user: UserRecord, name: string): Promise<PreviewBody> {
  const p = await previewOf(deps, name, user);
  if (!maySleepPreview(user, p)) throw new ApiError(403, `only admins can put the global preview environment ${name} to sleep`);
  const { cluster } = await deps.actAs(p.owner);
  const now = await settle(deps, cluster, p);
  if (now.status === 'sleeping') return now;
  if (now.status !== 'deployed') {
    throw new ApiError(
      409,
      `preview environment ${name} is ${now.status}: only a deployed preview can sleep${now.status === 'progressing' ? ' (wait until its run ends)' : ''}`,
    );
  }
  await cluster.scaleWorkloads(name, 'sleep');
  const since = deps.now().toISOString();
  await deps.store.updatePreview(name, { sleepingSince: since });
  return await settle(deps, cluster, { ...p, preview: { ...p.preview!, sleepingSince: since } });
}

export async function wakePreview(deps: PreviewDeps, user: UserRecord, name: string): Promise<PreviewBody> {
  const p = await previewOf(deps, name, user);
  const { cluster } = await deps.actAs(p.owner);
  // Woken even when not marked asleep: a sleep cut short (a service pod stopping) left annotations.
  await cluster.scaleWorkloads(name, 'wake');
  if (p.preview!.sleepingSince) await deps.store.updatePreview(name, { sleepingSince: null });
  const { sleepingSince: _, ...awake } = p.preview!;
  return await settle(deps, cluster, { ...p, preview: awake });
}
