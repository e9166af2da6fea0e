import type { CommandHandler } from '../../cli/spec.ts';
import { destroyApi, destroyEnvironment, type DestroyApi } from '../../deploy/destroy.ts';
import { loadDestroySource } from '../../deploy/environment-deploy.ts';
import { runDestroyCommands } from '../../deploy/manifest-deploy.ts';
import { environmentName, sanitizeName } from '../../app/name.ts';
import { Progress } from '../../deploy/progress.ts';
import type { Factory } from '../../factory.ts';
import { clusterTarget, type KubeTarget } from '../../kube/target.ts';
import type { destroyOptions } from './spec.ts';

/** What `destroy` does in the namespace of its environment. */
export interface DestroyCluster {
  /** The manifest's destroy commands (deploy/manifest-deploy.ts): they reach the cluster with a kubeconfig of their own. */
  runDestroyCommands(opts: Parameters<typeof runDestroyCommands>[1], progress: Progress): Promise<void>;
  /** The environment's objects and record (deploy/destroy.ts). */
  objects: DestroyApi;
}

export const runDestroy = destroyHandler(async (f, target) => {
  const client = await f.kube(target);
  return {
    runDestroyCommands: (opts, progress) => runDestroyCommands(client, opts, progress, f.now),
    objects: destroyApi(client),
  };
});

/** The handler, acting on the namespace `clusterOf` gives (the real one above; an in-memory one in its test). */
export function destroyHandler(clusterOf: (f: Factory, target: KubeTarget) => Promise<DestroyCluster>): CommandHandler<typeof destroyOptions> {
  return async (f, inv) => {
    // The manifest (--file, else the folder's devtool.yml when there is one): its destroy commands and
    // its environment name. Loaded first: a bad or missing file stops before anything is destroyed.
    const { manifest, folder } = loadDestroySource(f.cwd, inv.opts.file, f.env);
    const { context, namespace } = await clusterTarget(f, { context: inv.opts.context, namespace: inv.opts.namespace });
    const environment = environmentName(inv.opts.name ?? manifest?.name, folder);
    const cluster = await clusterOf(f, { context, namespace });
    const progress = new Progress(f.io.stderr, f.now, f.log);
    const timeoutMs = inv.opts.timeout;
    // External resources first: the commands may need what is still in the cluster.
    if (manifest) await cluster.runDestroyCommands({ manifest, environment, namespace, contextName: context.name, env: f.env, timeoutMs }, progress);
    const result = await destroyEnvironment(cluster.objects, { environment, volumes: inv.opts.volumes, wait: inv.opts.wait, timeoutMs }, progress, f.now);
    if (!result.found) {
      progress.done(`nothing to destroy: no environment ${environment} in namespace ${namespace}`);
      return;
    }
    progress.done(`environment ${environment} destroyed in namespace ${namespace} (${result.deleted.length} objects deleted)`);
    // Like Okteto: other applications may depend on them too.
    const dependencies = Object.keys(manifest?.dependencies ?? {}).map(sanitizeName);
    if (dependencies.length)
      progress.step(
        `dependencies are not destroyed: ${dependencies.join(', ')} (each is an environment of its own: run devtool destroy --name <it> in a ` +
          `checkout of its repository)`,
      );
    if (result.keptVolumes.length)
      progress.warn(`kept ${result.keptVolumes.length} volume(s): ${result.keptVolumes.join(', ')}; 'devtool destroy --volumes' deletes them`);
  };
}
