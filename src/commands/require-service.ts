/**
 * Commands that exist only with a devtool service. Namespace management and `kubeconfig` use it to
 * refuse a plain cluster or a context without a login. Previews, not built yet, say
 * clearly why they cannot run: on a plain cluster because the service is not installed there; on a
 * service context because this build has no client for them.
 */
import { UnavailableError } from '../base/errors.ts';
import type { CommandHandler } from '../cli/spec.ts';
import type { ContextStore } from '../context/store.ts';

export async function requireServiceContext(
  f: { readonly contexts: Pick<ContextStore, 'requireCurrent'>; readonly version: string },
  command: string,
  feature: string,
): Promise<never> {
  const ctx = await f.contexts.requireCurrent();
  if (!ctx.isDevtool) {
    throw new UnavailableError(
      `'devtool ${command}' needs the devtool service, and the current context "${ctx.name}" is a plain Kubernetes cluster without it (${feature} ` +
        `run on the service); select a service context with 'devtool context use <URL>'`,
    );
  }
  if (!ctx.token) {
    throw new UnavailableError(
      `'devtool ${command}' requires a logged-in user: log in with 'devtool context use ${ctx.name} --token <API_TOKEN>' or set DEVTOOL_TOKEN`,
    );
  }
  throw new UnavailableError(`'devtool ${command}' cannot reach ${ctx.name}: the devtool service client (${feature}) is not built in devtool ${f.version} yet`);
}

export function serviceCommandHandler(feature: string): CommandHandler {
  return async (f, inv) => await requireServiceContext(f, inv.commandName, feature);
}
