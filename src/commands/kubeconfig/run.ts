import { realpathSync } from 'node:fs';
import type { CommandHandler } from '../../cli/spec.ts';
import type { ResolvedContext } from '../../context/store.ts';
import { type KubeconfigEntry, updateKubeconfigContext, writeKubeconfigEntry } from '../../context/kubeconfig.ts';
import type { Factory } from '../../factory.ts';
import { requireLoggedInService } from '../require-service.ts';

export const runKubeconfig: CommandHandler = async (f) => {
  const ctx = await f.contexts.requireCurrent();
  if (ctx.isDevtool) return serviceKubeconfig(f, ctx);
  const file = await updateKubeconfigContext(f.env, ctx.name, { namespace: ctx.namespace, makeCurrent: true });
  f.io.stdout.write(`Updated context "${ctx.name}" (namespace "${ctx.namespace}") in ${file}\n`);
};

/**
 * A service context: the API server and CA the service names, and the user's own short-lived
 * credentials through the plugin `devtool kubetoken`, so kubectl's token refreshes itself.
 */
async function serviceKubeconfig(f: Factory, ctx: ResolvedContext): Promise<void> {
  requireLoggedInService(ctx, 'kubeconfig', 'cluster credentials');
  // Fetched now: a refused token fails here, not at the user's next kubectl; and the cache is warm.
  const credentials = await (await f.kubeCredentials(ctx)).current();
  const name = kubeContextName(ctx.name);
  const file = await writeKubeconfigEntry(f.env, {
    name,
    server: credentials.server,
    certificateAuthority: credentials.certificateAuthority,
    namespace: ctx.namespace,
    exec: pluginCommand(f.env, ctx.name),
  });
  f.io.stdout.write(`Updated context "${name}" (namespace "${ctx.namespace}") in ${file}\n`);
}

/** The kubeconfig name of a service context: its host and port (`https://devtool.example` -> devtool_example). */
export function kubeContextName(url: string): string {
  const u = new URL(url);
  return u.host.replace(/[^A-Za-z0-9-]+/g, '_');
}

/**
 * This very devtool (the node running it and its script), so the plugin is the version that wrote
 * the entry; DEVTOOL_HOME is passed when it is set, so the plugin finds the same contexts.
 */
export function pluginCommand(env: Readonly<NodeJS.ProcessEnv>, url: string): KubeconfigEntry['exec'] {
  const script = process.argv[1] ? realpathSync(process.argv[1]) : 'devtool';
  return {
    command: process.execPath,
    args: [script, 'kubetoken', '--context', url],
    env: env.DEVTOOL_HOME ? [{ name: 'DEVTOOL_HOME', value: env.DEVTOOL_HOME }] : [],
  };
}
