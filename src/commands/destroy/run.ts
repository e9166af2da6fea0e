import type { CommandHandler } from '../../cli/spec.ts';
import { destroyEnvironment } from '../../deploy/destroy.ts';
import { loadDestroySource } from '../../deploy/environment-deploy.ts';
import { runDestroyCommands } from '../../deploy/manifest-deploy.ts';
import { environmentName, sanitizeName } from '../../app/name.ts';
import { Progress } from '../../deploy/progress.ts';
import { clusterTarget } from '../../kube/target.ts';
import type { destroyOptions } from './spec.ts';

export const runDestroy: CommandHandler<typeof destroyOptions> = async (f, inv) => {
  // The manifest (--file, else the folder's devtool.yml when there is one): its destroy commands and
  // its environment name. Loaded first: a bad or missing file stops before anything is destroyed.
  const { manifest, folder } = loadDestroySource(f.cwd, inv.opts.file, f.env);
  const { context, namespace } = await clusterTarget(f, { context: inv.opts.context, namespace: inv.opts.namespace });
  const environment = environmentName(inv.opts.name ?? manifest?.name, folder);
  const client = await f.kube({ context, namespace });
  const progress = new Progress(f.io.stderr, f.now, f.log);
  const timeoutMs = inv.opts.timeout;
  // External resources first: the commands may need what is still in the cluster.
  if (manifest) await runDestroyCommands(client, { manifest, environment, namespace, contextName: context.name, env: f.env, timeoutMs }, progress, f.now);
  const result = await destroyEnvironment(client, { environment, volumes: inv.opts.volumes, wait: inv.opts.wait, timeoutMs }, progress, f.now);
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
