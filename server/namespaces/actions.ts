/**
 * Creating, deleting, putting to sleep and waking a namespace for a user, with the service's rules:
 * the API routes (routes/namespaces.ts) and the dashboard's forms act through these, so both refuse
 * the same names for the same reasons. Every refusal is an ApiError whose line says why.
 */
import { isDnsLabel } from '../../api/dns-label.ts';
import { PERSONAL_SUFFIX } from '../../api/routes.ts';
import { ApiError } from '../errors.ts';
import { reservedNamespaceReason } from '../reserved-namespaces.ts';
import type { ServiceDeps } from '../service-deps.ts';
import { ConflictError, type NamespaceRecord, type UserRecord } from '../store/store.ts';
import { type NamespaceDeps, sleepNamespace, wakeNamespace } from './sleep.ts';

/** A new namespace owned by `user`. */
export async function createNamespaceFor(ctx: ServiceDeps, user: UserRecord, name: string): Promise<NamespaceRecord> {
  if (!isDnsLabel(name)) throw new ApiError(400, `namespace ${name}: not a valid name (lower-case letters, digits and -, at most 63)`);
  if (name.endsWith(PERSONAL_SUFFIX)) throw new ApiError(400, `namespace ${name}: names ending in ${PERSONAL_SUFFIX} are reserved for personal namespaces`);
  const reserved = reservedNamespaceReason(ctx.config, name);
  if (reserved) throw new ApiError(403, `namespace ${name} is reserved (${reserved}): choose another name`);
  const existing = await ctx.store.getNamespace(name);
  if (existing?.owner === user.name) {
    throw new ApiError(
      409,
      existing.status === 'Terminating'
        ? `namespace ${name} is yours and being deleted: create it again once it is gone`
        : `namespace ${name} already exists and is yours: devtool namespace use ${name}`,
    );
  }
  if (existing || (await ctx.store.namespaceExists(name))) throw new ApiError(409, `namespace ${name} is taken: choose another name`);
  try {
    return await ctx.store.createNamespace({ name, owner: user.name, personal: false });
  } catch (err) {
    if (err instanceof ConflictError) throw new ApiError(409, `namespace ${name} is taken: choose another name`);
    throw err;
  }
}

/** Whether `user` may delete `ns` (its owner or an admin; never a personal namespace). */
export function mayDelete(user: UserRecord, ns: NamespaceRecord): boolean {
  return (ns.owner === user.name || user.admin) && !ns.personal;
}

/** Deletes `name` for `user` (already Terminating: nothing to do). */
export async function deleteNamespaceAs(ctx: ServiceDeps, user: UserRecord, name: string): Promise<void> {
  const ns = await ctx.store.getNamespace(name);
  if (!ns) {
    if (await ctx.store.namespaceExists(name)) throw new ApiError(403, `namespace ${name} is not managed by devtool: devtool does not delete it`);
    throw new ApiError(404, `namespace ${name} does not exist`);
  }
  if (ns.owner !== user.name && !user.admin) throw new ApiError(403, `namespace ${name}: only its owner (${ns.owner}) or an admin can delete it`);
  if (ns.personal) throw new ApiError(403, `namespace ${name} is the personal namespace of ${ns.owner}: it lives as long as the account`);
  if (ns.status === 'Terminating') return;
  await ctx.store.deleteNamespace(name);
}

/** Whether `user` may put `ns` to sleep or wake it: its owner or an admin. */
export function mayChangeSleep(user: UserRecord, ns: NamespaceRecord): boolean {
  return ns.owner === user.name || user.admin;
}

/** Refuses unless `user` may put `name` to sleep or wake it (`what`: "put it to sleep", "wake it"). */
async function requireSleepRight(
  store: Pick<ServiceDeps['store'], 'getNamespace' | 'namespaceExists'>,
  user: UserRecord,
  name: string,
  what: string,
): Promise<void> {
  const ns = await store.getNamespace(name);
  if (!ns) {
    if (await store.namespaceExists(name)) throw new ApiError(403, `namespace ${name} is not managed by devtool: devtool does not ${what}`);
    throw new ApiError(404, `namespace ${name} does not exist`);
  }
  if (!mayChangeSleep(user, ns)) throw new ApiError(403, `namespace ${name}: only its owner (${ns.owner}) or an admin can ${what}`);
}

/** Puts `name` to sleep for `user` (namespaces/sleep.ts does the sleeping). */
export async function sleepNamespaceAs(ctx: ServiceDeps, deps: NamespaceDeps, user: UserRecord, name: string): Promise<NamespaceRecord> {
  await requireSleepRight(ctx.store, user, name, 'put it to sleep');
  return sleepNamespace(deps, name, user.name);
}

/** Wakes `name` for `user`. */
export async function wakeNamespaceAs(ctx: ServiceDeps, deps: NamespaceDeps, user: UserRecord, name: string): Promise<NamespaceRecord> {
  await requireSleepRight(ctx.store, user, name, 'wake it');
  return wakeNamespace(deps, name);
}
