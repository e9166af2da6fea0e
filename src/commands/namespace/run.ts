import type { NamespaceBody } from '../../../api/routes.ts';
import { DevtoolError, UsageError } from '../../base/errors.ts';
import type { CommandHandler } from '../../cli/spec.ts';
import type { ResolvedContext } from '../../context/store.ts';
import type { Factory } from '../../factory.ts';
import { formatTable } from '../../io/table.ts';
import { describeKubeError } from '../../kube/config.ts';
import { checkNamespaceName } from '../../kube/naming.ts';
import { serviceTarget, serviceTargetOf } from '../require-service.ts';
import type { serviceOptions } from '../shared.ts';

const USE_HINT = 'pass the namespace: devtool namespace use <NAMESPACE>';
const FEATURE = 'namespace management';

export const runNamespaceUse: CommandHandler<typeof serviceOptions> = async (f, inv) => {
  const name = checkNamespaceName(inv.requireArg(0, 'NAMESPACE'));
  const ctx = await f.contexts.select(inv.opts.context);
  // (A context from DEVTOOL_URL/DEVTOOL_TOKEN cannot change: useNamespace says so before any request.)
  if (ctx.isDevtool && ctx.source !== 'environment') {
    // On a service context only the user's own namespaces can be used: their rights end there.
    const names = (
      await (await serviceTargetOf(f, ctx, 'namespace use', FEATURE, inv.opts.context !== undefined)).client.call('listNamespaces')
    ).namespaces.map((n) => n.name);
    if (!names.includes(name)) throw new DevtoolError(`namespace "${name}" is not one of yours on ${ctx.name} (yours: ${names.join(', ') || 'none'})`);
  }
  await useNamespace(f, name, inv.opts.context === undefined ? undefined : ctx);
};

/** `devtool namespace`: pick one of the user's namespaces (a service context) or of the cluster's. */
export const runNamespacePrompt: CommandHandler = async (f) => {
  if (!f.interactive) throw new UsageError(`no terminal to prompt on: ${USE_HINT}`);
  const ctx = await f.contexts.requireCurrent();
  const names = ctx.isDevtool
    ? (await (await serviceTargetOf(f, ctx, 'namespace', FEATURE)).client.call('listNamespaces')).namespaces.map((n) => n.name)
    : await clusterNamespaces(f, ctx);
  const picked = await f.prompter.select(
    'Select the namespace to use',
    names.map((n) => ({ name: n === ctx.namespace ? `${n} *` : n, value: n })),
    USE_HINT,
    ctx.namespace,
  );
  await useNamespace(f, picked);
};

/**
 * create: a namespace the user owns, made by the service; then the context switches to it. One the
 * user owns already is no failure: the context switches to it all the same.
 */
export const runNamespaceCreate: CommandHandler<typeof serviceOptions> = async (f, inv) => {
  const name = checkNamespaceName(inv.requireArg(0, 'NAMESPACE'));
  const { ctx, client } = await serviceTarget(f, 'namespace create', FEATURE, inv.opts.context);
  try {
    await client.call('createNamespace', { body: { name } });
    f.io.stdout.write(`Namespace "${name}" created\n`);
  } catch (err) {
    const mine = statusOf(err) === 409 ? (await client.call('listNamespaces')).namespaces.find((n) => n.name === name) : undefined;
    if (mine?.status !== 'Active') throw err;
    f.io.stdout.write(`Namespace "${name}" is already yours\n`);
  }
  await useNamespace(f, name, inv.opts.context === undefined ? undefined : ctx);
};

/**
 * delete: by its owner or an admin (the service decides); Kubernetes then removes its contents.
 * Deleting the namespace the context uses moves the context to the user's personal namespace.
 */
export const runNamespaceDelete: CommandHandler<typeof serviceOptions> = async (f, inv) => {
  const name = checkNamespaceName(inv.requireArg(0, 'NAMESPACE'));
  const { ctx, client } = await serviceTarget(f, 'namespace delete', FEATURE, inv.opts.context);
  await client.call('deleteNamespace', { params: { name } });
  f.io.stdout.write(`Namespace "${name}" is being deleted\n`);
  if (ctx.namespace === name && ctx.source !== 'environment') {
    await useNamespace(f, (await client.call('me')).namespace, inv.opts.context === undefined ? undefined : ctx);
  }
};

/** sleep: by its owner or an admin (the service decides and scales as the owner). */
export const runNamespaceSleep: CommandHandler<typeof serviceOptions> = async (f, inv) => {
  const name = checkNamespaceName(inv.requireArg(0, 'NAMESPACE'));
  const { client } = await serviceTarget(f, 'namespace sleep', FEATURE, inv.opts.context);
  const ns = await client.call('sleepNamespace', { params: { name } });
  f.io.stdout.write(`Namespace "${name}" is asleep${ns.sleep?.since ? ` since ${ns.sleep.since}` : ''}: 'devtool namespace wake ${name}' wakes it\n`);
};

/** wake: its workloads back; Waking until they are available. */
export const runNamespaceWake: CommandHandler<typeof serviceOptions> = async (f, inv) => {
  const name = checkNamespaceName(inv.requireArg(0, 'NAMESPACE'));
  const { client } = await serviceTarget(f, 'namespace wake', FEATURE, inv.opts.context);
  const ns = await client.call('wakeNamespace', { params: { name } });
  f.io.stdout.write(ns.sleep?.state === 'Waking' ? `Namespace "${name}" is waking: its workloads are starting\n` : `Namespace "${name}" is awake\n`);
};

/** list: the user's namespaces with their real status; those being deleted show Terminating, sleeping ones Sleeping. */
export const runNamespaceList: CommandHandler<typeof serviceOptions> = async (f, inv) => {
  const { ctx, client } = await serviceTarget(f, 'namespace list', FEATURE, inv.opts.context);
  const { namespaces } = await client.call('listNamespaces');
  const rows = namespaces.map((n) => [n.name === ctx.namespace ? `${n.name} *` : n.name, statusWord(n), sleepNote(n)]);
  const withSleep = rows.some((r) => r[2] !== '-');
  f.io.stdout.write(
    withSleep
      ? formatTable(['Namespace', 'Status', 'Sleep'], rows)
      : formatTable(
          ['Namespace', 'Status'],
          rows.map((r) => r.slice(0, 2)),
        ),
  );
};

function statusWord(n: NamespaceBody): string {
  return n.status === 'Active' && n.sleep ? n.sleep.state : n.status;
}

/** Since when and by whom it sleeps, or when the service puts it to sleep or deletes it; `-` for nothing. */
export function sleepNote(n: NamespaceBody): string {
  const notes: string[] = [];
  if (n.sleep?.state === 'Sleeping') notes.push(`since ${n.sleep.since}${n.sleep.by ? ` by ${n.sleep.by}` : ''}`);
  if (n.sleep?.state === 'Waking') notes.push(`waking since ${n.sleep.since}`);
  if (n.sleepsAt) notes.push(`sleeps at ${n.sleepsAt}`);
  if (n.deletesAt) notes.push(`deleted at ${n.deletesAt}`);
  return notes.join(', ') || '-';
}

async function clusterNamespaces(f: Factory, ctx: ResolvedContext): Promise<string[]> {
  const { withTimeout } = await import('../../kube/client.ts');
  const client = await f.kube({ context: ctx });
  try {
    return (await withTimeout(client.core.listNamespace(), 15_000, `listing the namespaces of ${ctx.name}`)).items
      .map((n) => n.metadata?.name ?? '')
      .filter(Boolean);
  } catch (err) {
    throw new DevtoolError(`cannot list the namespaces of ${ctx.name}: ${describeKubeError(err)}; ${USE_HINT}`);
  }
}

const statusOf = (err: unknown) => (err as { status?: unknown }).status;

/** Makes `namespace` the namespace of the current context, or of `of` (the context --context named). */
async function useNamespace(f: Factory, namespace: string, of?: ResolvedContext): Promise<void> {
  const ctx = await f.contexts.setNamespace(namespace, of);
  f.io.stdout.write(`Using namespace "${ctx.namespace}" @ ${ctx.name} (${ctx.host || 'unknown host'})\n`);
}
