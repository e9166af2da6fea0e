/**
 * Commands that exist only with a devtool service (namespaces, users, pipelines, previews,
 * `kubeconfig`) act on a logged-in service context: the one their --context names, else the
 * current one. A plain cluster or a context without a login is refused, saying clearly why.
 */
import { UnavailableError } from '../base/errors.ts';
import type { ContextStore, ResolvedContext } from '../context/store.ts';
import type { Factory } from '../factory.ts';
import type { ServiceClient } from '../service/client.ts';

export interface ServiceTarget {
  readonly ctx: ResolvedContext & { readonly token: string };
  readonly client: ServiceClient;
}

/**
 * The context a service command acts on (`contextName` from its --context, else the current one)
 * and a client logged in as its user; `feature` says what runs on the service, for the refusal.
 */
export async function serviceTarget(
  f: { readonly contexts: Pick<ContextStore, 'select'>; readonly service: Factory['service'] },
  command: string,
  feature: string,
  contextName?: string,
): Promise<ServiceTarget> {
  return serviceTargetOf(f, await f.contexts.select(contextName), command, feature, contextName !== undefined);
}

/** The same for a context the command has chosen already (`named`: by its --context). */
export async function serviceTargetOf(
  f: { readonly service: Factory['service'] },
  ctx: ResolvedContext,
  command: string,
  feature: string,
  named = false,
): Promise<ServiceTarget> {
  requireLoggedInService(ctx, command, feature, named);
  return { ctx, client: await f.service({ url: ctx.name, token: ctx.token }) };
}

/** Refuses a plain cluster context, or a service context without a login, in one line naming what to run. */
export function requireLoggedInService(
  ctx: ResolvedContext,
  command: string,
  feature: string,
  named = false,
): asserts ctx is ResolvedContext & { readonly token: string } {
  const which = named ? 'the context' : 'the current context';
  if (!ctx.isDevtool) {
    throw new UnavailableError(
      `'devtool ${command}' needs the devtool service, and ${which} "${ctx.name}" is a plain Kubernetes cluster without it (${feature} ` +
        `run on the service); select a service context with 'devtool context use <URL>'${named ? '' : ' or pass --context <URL>'}`,
    );
  }
  if (!ctx.token) {
    throw new UnavailableError(
      `'devtool ${command}' requires a logged-in user: log in with 'devtool context use ${ctx.name} --token <API_TOKEN>' or set DEVTOOL_TOKEN`,
    );
  }
}
