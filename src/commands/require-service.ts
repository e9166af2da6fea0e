/**
 * Commands that exist only with a devtool service (namespaces, `kubeconfig`, pipelines, previews)
 * use it to refuse a plain cluster or a context without a login, saying clearly why.
 */
import { UnavailableError } from '../base/errors.ts';
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
